/**
 * The input of a `TrainingPipeline` execution. Every field is optional: `{}` packs what changed,
 * trains with the construct's hyperparameters and diagnoses the job.
 */
export interface PipelineExecutionInput {
  /**
   * Repack even when the source and the packing options match the last manifest.
   *
   * @default false
   */
  readonly force?: boolean;

  /**
   * Hyperparameters for this run's job, over the ones the construct sets (string values, as
   * SageMaker takes them), e.g. `{ "epochs": "5" }`. A `num_workers` here replaces the loader
   * workers the dataset's shard count was sized for (`training-io launch` warns).
   *
   * @default - the construct's hyperparameters
   */
  readonly hyperparameters?: { [name: string]: string };
}

/**
 * What an execution that succeeded returns: the input, with what each step added.
 */
export interface PipelineExecutionOutput {
  /** The training job's name, `<job name prefix>-<execution name>`. */
  readonly trainingJobName: string;
  /** The diagnosis: its verdict and where the reports are. */
  readonly diagnosis: PipelineDiagnosis;
}

/** The diagnosis step's result, as the job-diagnoser Lambda returns it. */
export interface PipelineDiagnosis {
  /** `long-download`, `preprocessing-bound`, `input-bound`, `gpu-memory-headroom`, `step-bound`, `healthy`, `insufficient-data`, `job-failed` or `job-stopped`. */
  readonly verdict: string;
  /** One sentence on what held the GPUs back. */
  readonly summary: string;
  /** The Markdown report, beside the job's output. */
  readonly markdownUri: string;
  /** The JSON report. */
  readonly reportUri: string;
  /** The metric set the report was made from: `training-io diagnose --metrics` reads it. */
  readonly metricsUri: string;
}
