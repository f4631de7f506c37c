import * as fs from 'fs';
import * as path from 'path';

// Issue 41: TrainingJob's request is rendered by small methods, as aws-cdk-lib's SageMakerCreateTrainingJob
// renders its own (renderAlgorithmSpecification, renderResourceConfig, ...), not by one long constructor.
const MAX_LINES = 90;

/** The class members and top-level functions of a source file with their lengths in lines, by their first line. */
function functionLengths(source: string): Array<{ readonly name: string; readonly lines: number }> {
  const lines = source.split('\n');
  const found: Array<{ name: string; lines: number }> = [];
  lines.forEach((line, start) => {
    const opening = /^( {0,2})(?:export )?(?:(?:public|private|protected|static|async|get|function) )*(constructor|[A-Za-z_]\w*)\s*[<(].*\{$/.exec(line);
    if (!opening || /^\s*(if|for|while|switch)\b/.test(line)) return;
    const end = lines.findIndex((candidate, index) => index > start && candidate === `${opening[1]}}`);
    if (end > start) found.push({ name: opening[2], lines: end - start + 1 });
  });
  return found;
}

describe('function length', () => {
  test('the measure finds a long function and a short one', () => {
    const source = ['function short() {', '  return 1;', '}', 'class A {', '  private long(): void {', ...Array(100).fill('    call();'), '  }', '}'].join('\n');
    expect(functionLengths(source)).toEqual([{ name: 'short', lines: 3 }, { name: 'long', lines: 102 }]);
  });

  test(`no function of lib/training/training-job.ts is longer than ${MAX_LINES} lines`, () => {
    // GIVEN
    const source = fs.readFileSync(path.join(__dirname, '..', '..', 'lib', 'training', 'training-job.ts'), 'utf8');
    // WHEN
    const lengths = functionLengths(source);
    // THEN
    expect(lengths.map((f) => f.name)).toEqual(expect.arrayContaining(['constructor', 'renderAlgorithmSpecification', 'renderResourceConfig']));
    expect(lengths.filter((f) => f.lines > MAX_LINES)).toEqual([]);
  });
});
