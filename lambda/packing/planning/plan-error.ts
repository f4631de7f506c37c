/**
 * Options or a listing the shard planner cannot plan: names the option or the key, the value
 * received and what is allowed.
 */
export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanError';
  }
}
