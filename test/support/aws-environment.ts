/** The variables the SDK's default credential and region chain reads. */
const AWS_VARIABLES = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE'];

/**
 * Gives the CLI test credentials (and no region, so that tests pass `--region`) for the tests of
 * one file: call in `beforeAll`, and the returned function in `afterAll`.
 */
export function useTestCredentials(credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' }): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const name of AWS_VARIABLES) {
    saved[name] = process.env[name];
    delete process.env[name];
  }
  process.env.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
  return () => {
    for (const name of AWS_VARIABLES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  };
}
