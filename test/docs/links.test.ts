import * as fs from 'fs';
import * as path from 'path';
import { brokenLink, githubSlug, headingAnchors, readRepositoryPath, relativeLinks, REPO_ROOT, userPages } from '../support/markdown';

// Every relative link of README.md, docs/*.md and ARCHITECTURE.md resolves: files and #anchors, by GitHub's rules.

const PAGES = [...userPages(), 'ARCHITECTURE.md'];

describe('relative links of the README and docs/', () => {
  test('README.md links to every page of docs/, and every page of docs/ links back to README.md', () => {
    // GIVEN
    const readme = relativeLinks('README.md', fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')).map((link) => link.target.split('#')[0]);
    const docs = userPages().filter((page) => page.startsWith('docs/'));
    // THEN
    expect(docs.length).toBeGreaterThan(0);
    expect(docs.filter((page) => !readme.includes(page))).toEqual([]);
    expect(docs.filter((page) => !relativeLinks(page, fs.readFileSync(path.join(REPO_ROOT, page), 'utf8'))
      .some((link) => link.target.split('#')[0] === '../README.md'))).toEqual([]);
  });

  test.each(PAGES)('every relative link of %s resolves to a file and, with an #anchor, to a heading there', (page) => {
    // GIVEN
    const links = relativeLinks(page, fs.readFileSync(path.join(REPO_ROOT, page), 'utf8'));
    // WHEN
    const broken = links.map((link) => [link, brokenLink(link, readRepositoryPath)] as const)
      .filter(([, why]) => why !== undefined)
      .map(([link, why]) => `${page}:${link.line}: ${why}`);
    // THEN
    expect(broken).toEqual([]);
  });
});

describe('the link checker', () => {
  const pages: Record<string, string> = {
    'README.md': '# Title\n\n## `TrainingPipeline`: pack → FSx → train\n\n## Notes\n\n## Notes\n\n```md\n# Not a heading\n[x](missing.md)\n```\n',
    'docs/a.md': '# A\n\nSee [the pipeline](../README.md#trainingpipeline-pack--fsx--train) and `[not](a-link.md)`.\n<!-- nor\n[this](comment.md) -->\n',
  };
  const read = (file: string) => pages[file];

  test('makes anchors as GitHub does: code marks and punctuation dropped, spaces to hyphens, repeats numbered', () => {
    expect(githubSlug('`TrainingPipeline`: pack → FSx → train → diagnose')).toBe('trainingpipeline-pack--fsx--train--diagnose');
    expect(githubSlug('Packing 2,000,000 × 5 KB on AWS: an estimate on paper')).toBe('packing-2000000--5-kb-on-aws-an-estimate-on-paper');
    expect(githubSlug('What `pack` writes')).toBe('what-pack-writes');
    expect([...headingAnchors(pages['README.md'])]).toEqual(['title', 'trainingpipeline-pack--fsx--train', 'notes', 'notes-1']);
  });

  test('finds links outside code only, and resolves them from the page that holds them', () => {
    // GIVEN
    const links = relativeLinks('docs/a.md', pages['docs/a.md']);
    // THEN
    expect(links).toEqual([{ page: 'docs/a.md', line: 3, target: '../README.md#trainingpipeline-pack--fsx--train' }]);
    expect(relativeLinks('README.md', pages['README.md'])).toEqual([]);
    expect(brokenLink(links[0], read)).toBeUndefined();
  });

  test.each([
    ['missing.md', 'there is no docs/missing.md'],
    ['../README.md#notes-2', 'README.md has no heading #notes-2'],
    ['#nowhere', 'docs/a.md has no heading #nowhere'],
    ['../../outside.md', 'leaves the repository'],
  ])('refuses %s (%s)', (target, why) => {
    expect(brokenLink({ page: 'docs/a.md', line: 1, target }, read)).toContain(why);
  });
});
