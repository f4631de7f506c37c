'use strict';
// s3rver (npm) on 127.0.0.1, for tests on machines without python3-swift. In a process of its own,
// as the Swift server is, so that a test's kill() is a crash and restart() a new process on the
// same port and folder.
//
//     node --openssl-legacy-provider s3rver-server.js --dir DIR [--port PORT]
//
// DIR holds the buckets (reused when present). PORT 0 or absent: a free one. When it listens, one
// line `ready <port>` goes to stdout. Credentials: access key `S3RVER`, secret key `S3RVER`.
// --openssl-legacy-provider: s3rver encrypts ListObjectsV2 continuation tokens with DES, which
// OpenSSL 3 has only in its legacy provider; without it a truncated listing answers 500.
const { parseArgs } = require('node:util');
const S3rver = require('s3rver');

const { values } = parseArgs({ options: { dir: { type: 'string' }, port: { type: 'string', default: '0' } } });
// Exit codes through process.exitCode: the process ends once nothing is left listening.
if (!values.dir) {
  process.stderr.write('s3rver-server.js: --dir is required\n');
  process.exitCode = 2;
} else {
  const server = new S3rver({ address: '127.0.0.1', port: Number(values.port), directory: values.dir, silent: true });
  server.run().then(({ port }) => {
    process.stdout.write(`ready ${port}\n`);
  }, (error) => {
    process.stderr.write(`s3rver-server.js: ${error.stack ?? error.message}\n`);
    process.exitCode = 1;
  });
}
