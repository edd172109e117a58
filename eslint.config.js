// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'reports/', 'uploads/', 'coverage/', 'src/server/public/', 'bench/.data/', 'test/.output/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // The namespace object `z` of zod's index holds every export, its locales among them (about half of zod): with
      // `import * as z`, the bundle (scripts/build.mjs) keeps only what src uses.
      'no-restricted-syntax': [
        'error',
        { selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']", message: "import * as z from 'zod'" },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly' } },
  },
);
