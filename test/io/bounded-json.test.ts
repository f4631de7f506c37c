import * as fs from 'node:fs';
import * as path from 'node:path';
import { jsonDepth, JsonLimitError, parseBoundedJson, readBoundedJsonFile } from '../../lambda/io/bounded-json';
import { MAX_JSON_BYTES, MAX_JSON_DEPTH } from '../../lib/contract/json-limits';
import { temporaryFolders } from '../support/local-files';

const folder = temporaryFolders();

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

describe('bounded JSON', () => {
  test('the depth counts arrays and objects, not brackets inside strings', () => {
    // WHEN / THEN
    expect(jsonDepth(Buffer.from('{"a": [1, {"b": "[[[{{{\\"]]]"}]}'))).toBe(3);
    expect(jsonDepth(Buffer.from('"just a string"'))).toBe(0);
    expect(jsonDepth(Buffer.from('[["a\\\\", ["b\\\\\\"]"]]]'))).toBe(3);
    expect(jsonDepth(Buffer.from('[["unterminated ]]'))).toBe(2);
  });

  test(`a document ${MAX_JSON_DEPTH} levels deep is parsed; one level more, and one 200,000 deep, are refused naming it`, () => {
    // WHEN / THEN
    expect(parseBoundedJson('ok.json', nested(MAX_JSON_DEPTH))).toBeInstanceOf(Array);
    expect(() => parseBoundedJson('deep.json', nested(MAX_JSON_DEPTH + 1))).toThrow(new JsonLimitError(
      `deep.json: JSON nested more than ${MAX_JSON_DEPTH} levels deep; refused (the documents this tool writes nest 4 deep)`));
    expect(() => parseBoundedJson('versions/v1/manifest.json', nested(200_000))).toThrow(/^versions\/v1\/manifest\.json: JSON nested more than 64/);
  });

  test('a document over the size limit is refused before it is parsed, naming it and both sizes', () => {
    // GIVEN: spaces are valid JSON around a value, and cost nothing to make
    const large = Buffer.alloc(MAX_JSON_BYTES + 1, 0x20);
    large[0] = 0x30;

    // WHEN / THEN
    expect(() => parseBoundedJson('manifest.json', large)).toThrow(/^manifest\.json: 256\.0 MiB of JSON is more than the 256 MiB allowed; refused without parsing it$/);
  });

  test('a file that is not a regular file is refused without reading it: a FIFO, /dev/zero, a folder', () => {
    // GIVEN
    const dir = folder('json');

    // WHEN / THEN
    expect(() => readBoundedJsonFile('/dev/zero')).toThrow('/dev/zero: not a regular file; only a file is read as JSON');
    expect(() => readBoundedJsonFile(dir)).toThrow(`${dir}: not a regular file`);
    const file = path.join(dir, 'set.json');
    fs.writeFileSync(file, '{"a": 1}');
    expect(readBoundedJsonFile(file)).toEqual({ a: 1 });
  });
});
