#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { SegmentationStack } from './stack';

const app = new App();
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
new SegmentationStack(app, 'Segmentation');
app.synth();
