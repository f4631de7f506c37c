// ESLint (flat config) with typescript-eslint, type-aware: the rules that catch what tsc does not
// (no floating promises, type-only imports, no unused code; docs/contributing.md "Conventions").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // Build output, bundles and the Python of container/ are not ours to lint here; nor .gpu/, the
    // built copy bench/container-gpu/prepare.sh leaves for the GPU machine (ESLint does not read
    // .git/info/exclude, where prepare.sh lists it).
    ignores: ['node_modules/', 'dist/', 'lambda/dist/', 'cdk.out/', 'coverage/', 'container/', '.gpu/', '**/*.d.ts'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      // The project's own tsconfig for tests, benches and examples too: one program, one set of types.
      parserOptions: { project: './tsconfig.dev.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A promise nobody awaits loses its error: await it, or say why not with `void`.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Type-only imports are erased: esbuild and ts-jest transpile file by file and must know which are.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-unused-private-class-members': 'error',
      'eqeqeq': ['error', 'always'],
      'prefer-const': 'error',
      // The request bodies and API answers the tests and handlers handle are JSON of any shape.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // lib/ reports through Annotations and errors, never the console (docs/contributing.md "Conventions").
    files: ['lib/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
  {
    // Plain Node scripts beside the TypeScript: the bundler and the s3rver launcher.
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly', URL: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
