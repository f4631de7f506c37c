#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CustomModelStack } from './stack';

const app = new App();
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
new CustomModelStack(app, 'CustomModel');
app.synth();
