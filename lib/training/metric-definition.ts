/**
 * A metric SageMaker extracts from the training log with a regular expression.
 *
 * @see https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_MetricDefinition.html
 */
export interface MetricDefinition {
  /** Metric name, 1–255 characters. */
  readonly name: string;
  /** Regular expression whose first group is the value, 1–500 characters. */
  readonly regex: string;
}
