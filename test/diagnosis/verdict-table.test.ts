import * as fs from 'fs';
import * as path from 'path';
import { VERDICTS } from '../../lambda/diagnosis/diagnosis';
import { VERDICT_RULES } from '../../lambda/diagnosis/verdict-table';

describe('the table of verdicts', () => {
  test('gives every verdict exactly one rule', () => {
    // WHEN
    const ruled = VERDICT_RULES.flatMap((rule) => rule.verdicts);
    // THEN
    expect([...ruled].sort()).toEqual(Object.keys(VERDICTS).sort());
  });

  test('lists every rule file of verdicts/ once', () => {
    // GIVEN: a rule file exports a VerdictRule; gpu-conditions.ts holds what the GPU rules share
    const folder = path.join(__dirname, '..', '..', 'lambda', 'diagnosis', 'verdicts');
    const ruleFiles = fs.readdirSync(folder).filter((name) => fs.readFileSync(path.join(folder, name), 'utf8').includes(': VerdictRule ='));
    // THEN
    expect(ruleFiles).toHaveLength(VERDICT_RULES.length);
    expect(new Set(VERDICT_RULES).size).toBe(VERDICT_RULES.length);
  });

  test('lets only the job\'s ending lead the findings', () => {
    expect(VERDICT_RULES.filter((rule) => rule.leads).map((rule) => rule.verdicts)).toEqual([['job-failed', 'job-stopped']]);
  });
});
