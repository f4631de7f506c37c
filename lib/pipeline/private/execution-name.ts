/**
 * Execution names a TrainingPipeline accepts: they name the training job (`<prefix>-<execution name>`),
 * so they follow SageMaker's job-name rules and leave room for a prefix of up to 26 characters.
 * The UUIDs Step Functions gives unnamed executions fit.
 */
export const PIPELINE_EXECUTION_NAME = {
  pattern: /^[a-zA-Z0-9](-*[a-zA-Z0-9])*$/,
  maxLength: 36,
} as const;
