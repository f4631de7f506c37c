import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import * as library from '../../lib';
import { fragmentPrelude } from './fragment-prelude';
import type { CodeBlock } from '../support/markdown';
import { codeBlocks, REPO_ROOT, userPages } from '../support/markdown';

// The README's and docs/'s code blocks compile: ```ts blocks type-check against the library (a
// ```ts fragment after the prelude of ./fragment-prelude.ts), ```python blocks compile and import
// with container/ on sys.path. docs/contributing.md "Writing these docs" says how to mark them.

const TYPESCRIPT = new Set(['ts', 'typescript']);
const LIBRARY_EXPORTS = Object.keys(library);
/** Where the blocks lie as virtual files: under the repository, so that 'aws-cdk-lib' resolves to its node_modules. */
const BLOCK_DIR = path.join(REPO_ROOT, 'docs', '.code-blocks');

const BLOCKS = userPages().flatMap((page) => codeBlocks(page, fs.readFileSync(path.join(REPO_ROOT, page), 'utf8')));
const TS_BLOCKS = BLOCKS.filter((block) => TYPESCRIPT.has(block.language));
const PYTHON_BLOCKS = BLOCKS.filter((block) => block.language === 'python');

/** A block as a module of its own: a fragment after its prelude. Returns the text and how many lines precede the block's code. */
function moduleOf(block: CodeBlock): { readonly text: string; readonly offset: number } {
  const prelude = block.flags.includes('fragment') ? fragmentPrelude(block.code, LIBRARY_EXPORTS) : '';
  const head = prelude === '' ? '' : `${prelude}\n`;
  return { text: `${head}${block.code}\nexport {};\n`, offset: head.split('\n').length - 1 };
}

/**
 * Type-checks the blocks in one program with the project's compiler options, `cdk-training-io`
 * mapped to lib/index.ts and unused names allowed; the errors as `page:line: message`.
 */
function typeErrors(blocks: readonly CodeBlock[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(REPO_ROOT, 'tsconfig.dev.json'), {}, {
    ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => { throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')); },
  });
  if (!config) throw new Error('tsconfig.dev.json cannot be read');
  const options: ts.CompilerOptions = { ...config.options, noEmit: true, incremental: false, noUnusedLocals: false, noUnusedParameters: false };
  const files = new Map(blocks.map((block) => [
    path.join(BLOCK_DIR, `${block.page.replace(/[/.]/g, '_')}_${block.line}.ts`), { block, ...moduleOf(block) },
  ]));
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => files.has(file) || fileExists(file);
  host.readFile = (file) => files.get(file)?.text ?? readFile(file);
  host.getSourceFile = (file, language, ...rest) => {
    const virtual = files.get(file);
    return virtual ? ts.createSourceFile(file, virtual.text, language, true) : getSourceFile(file, language, ...rest);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    const virtual = diagnostic.file ? files.get(diagnostic.file.fileName) : undefined;
    if (!diagnostic.file || !virtual) return `${diagnostic.file?.fileName ?? '(program)'}: ${message}`;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const where = line < virtual.offset ? `the prelude of the block at ${virtual.block.line}` : `${virtual.block.line + line - virtual.offset}`;
    return `${virtual.block.page}:${where}: ${message}`;
  });
}

/** PYTHON if set; else Debian's /usr/bin/python3 where it has PyTorch (as test/container does); else python3. */
function python(): string {
  if (process.env.PYTHON) return process.env.PYTHON;
  const torch = spawnSync('/usr/bin/python3', ['-c', 'import torch, torchvision'], { stdio: 'ignore', timeout: 60_000 });
  return torch.status === 0 ? '/usr/bin/python3' : 'python3';
}

/**
 * Compiles each block and runs its import statements with container/ on sys.path. Where a module
 * of container/ cannot load for want of a third-party package (PyTorch on a machine without it),
 * its file must at least define the imported names at its top level.
 */
const PYTHON_CHECK = `
import ast, importlib, json, os, sys
errors = []
def defined_names(module):
    file = os.path.join('container', *module.split('.'))
    file = file + '.py' if os.path.exists(file + '.py') else os.path.join(file, '__init__.py')
    tree = ast.parse(open(file).read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)): names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)): names.update((a.asname or a.name).split('.')[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names
for block in json.load(sys.stdin):
    where = '%s:%d' % (block['page'], block['line'])
    try:
        tree = ast.parse(block['code'], where)
    except SyntaxError as error:
        errors.append('%s: %s' % (where, error)); continue
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)): continue
        line = '%s:%d' % (block['page'], block['line'] + node.lineno - 1)
        try:
            exec(compile(ast.Module(body=[node], type_ignores=[]), line, 'exec'), {})
        except ModuleNotFoundError as error:
            module = getattr(node, 'module', None)
            if error.name.split('.')[0] == 'shardio' or not module or not module.startswith('shardio'):
                errors.append('%s: %s' % (line, error)); continue
            missing = [a.name for a in node.names if a.name not in defined_names(module)]
            if missing: errors.append('%s: %s defines no %s' % (line, module, ', '.join(missing)))
        except Exception as error:
            errors.append('%s: %s: %s' % (line, type(error).__name__, error))
print(json.dumps(errors))
`;

function pythonErrors(blocks: readonly CodeBlock[]): string[] {
  const run = spawnSync(python(), ['-c', PYTHON_CHECK], {
    cwd: REPO_ROOT, input: JSON.stringify(blocks), encoding: 'utf8', timeout: 120_000,
    env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'container'), PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (run.status !== 0) throw new Error(`the Python check failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

describe('code blocks of the README and docs/', () => {
  test('there are TypeScript and Python blocks to check, complete programs and fragments', () => {
    expect(TS_BLOCKS.filter((block) => !block.flags.includes('fragment')).length).toBeGreaterThan(0);
    expect(TS_BLOCKS.filter((block) => block.flags.includes('fragment')).length).toBeGreaterThan(0);
    expect(PYTHON_BLOCKS.length).toBeGreaterThan(0);
  });

  test('every ```ts block type-checks against the library, and a block with an error would not', () => {
    // GIVEN: the docs' blocks, and one wrong block (a prop TrainingInstance.of does not have)
    const wrong: CodeBlock = {
      page: 'wrong.md', line: 3, language: 'ts', flags: ['fragment'],
      code: "const custom = TrainingInstance.of('ml.x.large', { vcpus: 4, gpuCount: 1 });",
    };
    // WHEN
    const errors = typeErrors([...TS_BLOCKS, wrong]);
    // THEN
    expect(errors.filter((error) => !error.startsWith('wrong.md:'))).toEqual([]);
    expect(errors).toEqual([expect.stringMatching(/^wrong\.md:3: .*gpuCount/)]);
  }, 180_000);

  test('every ```python block compiles and imports with container/ on sys.path, and a wrong import would not', () => {
    // GIVEN
    const wrong: CodeBlock = { page: 'wrong.md', line: 3, language: 'python', flags: [], code: 'import shardio\nfrom shardio import no_such_name\n' };
    // WHEN
    const errors = pythonErrors([...PYTHON_BLOCKS, wrong]);
    // THEN
    expect(errors.filter((error) => !error.startsWith('wrong.md:'))).toEqual([]);
    expect(errors).toEqual([expect.stringMatching(/^wrong\.md:4: .*no_such_name/)]);
  }, 120_000);
});

describe('one way to start an epoch', () => {
  test('the docs, the examples and the readers\' docstrings call loader.set_epoch, never loader.dataset.set_epoch', () => {
    // GIVEN: every user page, the examples' scripts and the readers (whose own delegation is self.dataset / self.loader.dataset)
    const examples = fs.readdirSync(path.join(REPO_ROOT, 'examples'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.py') || file.endsWith('.md')).map((file) => path.join('examples', file));
    const readers = fs.readdirSync(path.join(REPO_ROOT, 'container', 'shardio')).filter((file) => file.endsWith('.py'))
      .map((file) => path.join('container', 'shardio', file));
    // WHEN
    const uses = [...userPages(), ...examples, ...readers].flatMap((file) => fs.readFileSync(path.join(REPO_ROOT, file), 'utf8').split('\n')
      .map((line, i) => ({ where: `${file}:${i + 1}`, line }))
      .filter(({ line }) => /(?<!self\.|self\.loader\.)\bloader\.dataset\.set_epoch/.test(line) || /\bloader\.dataset\.set_epoch\(e\)/.test(line)));
    // THEN
    expect(uses.map(({ where, line }) => `${where}: ${line.trim()}`)).toEqual([]);
  });
});
