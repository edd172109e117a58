// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// The layout of src/ (issue 23; each folder's README.md says what it owns): which folder may import which. A rule is a
// regex over the import's relative specifier, so it names the folders as the importing file sees them. Static imports
// (type-only ones too) go through no-restricted-imports, import() through no-restricted-syntax. Cycles: npm run
// lint:cycles (madge).
const ROOMS = ['read', 'map', 'resolve', 'sync', 'report'];
const UP = '(?:\\.{1,2}/)+';
/** Config objects forbidding, in `files`, imports whose specifier matches one of `regexes` (`why` is the message). */
function forbid(files, regexes, why, ignores = []) {
  const message = `${why} (see the folder's README.md)`;
  return {
    files,
    ignores,
    rules: {
      'no-restricted-imports': ['error', { patterns: regexes.map((regex) => ({ regex, message })) }],
      'no-restricted-syntax': [
        'error',
        ...regexes.map((regex) => ({
          selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\/')}/]`,
          message,
        })),
      ],
    },
  };
}
function layoutRules() {
  const above = (depth, names) => `^${'\\.\\./'.repeat(depth)}(?:${names.join('|')})(?:/|\\.ts$)`;
  return [
    // Later objects replace the rule for their files, so each file gets one object: the most specific.
    forbid(['src/**/*.ts'], [`^${UP}commands/`], 'only src/cli.ts and src/commands/ import a command', [
      'src/cli.ts',
      'src/commands/**',
    ]),
    forbid(
      ['src/formats/**/*.ts'],
      [above(1, ['pipeline', 'queue', 'server', 'sandbox', 'commands', 'onboarding', 'runtime'])],
      'src/formats/ reads and writes files: it knows nothing of the pipeline, the queue, the servers, onboarding',
    ),
    forbid(
      ['src/api/**/*.ts'],
      [above(1, ['pipeline', 'formats', 'queue', 'server', 'sandbox', 'commands', 'onboarding', 'runtime', 'lease'])],
      'src/api/ is the product API client: it knows nothing of what calls it',
    ),
    forbid(
      ['src/sandbox/**/*.ts'],
      [`^(?:\\.\\./)+(?:pipeline|formats|queue|server|commands|onboarding|runtime)(?:/|\\.ts$)`],
      "src/sandbox/ is a stand-in for the product API: it shares the API's field tables, nothing of the importer",
    ),
    forbid(
      ['src/sources/**/*.ts'],
      [above(1, ['pipeline', 'queue', 'server', 'sandbox', 'commands', 'onboarding', 'runtime'])],
      "src/sources/ lists and downloads a feed's files: it knows nothing of the pipeline, the queue or the servers",
    ),
    forbid(
      ['src/events/**/*.ts'],
      [above(1, ['queue', 'server', 'sandbox', 'commands', 'onboarding', 'runtime'])],
      'src/events/ makes, signs and delivers events: the queue and the commands call it, never the reverse',
    ),
    forbid(
      ['src/metrics/**/*.ts'],
      [above(1, ['queue', 'server', 'sandbox', 'commands', 'onboarding', 'runtime'])],
      'src/metrics/ counts what runs do, inline or queued: the queue and the servers call it, never the reverse',
    ),
    forbid(
      ['src/*.ts'],
      [`^\\./(?:queue|server|commands|onboarding|metrics|events|sources|lease)/`],
      "the files at the root of src/ serve every room: only src/cli.ts imports a command, none imports a room's driver",
      ['src/cli.ts'],
    ),
    forbid(
      ['src/lease/**/*.ts'],
      [
        above(1, [
          'pipeline',
          'formats',
          'queue',
          'server',
          'sandbox',
          'commands',
          'onboarding',
          'sources',
          'events',
          'metrics',
          'runtime',
        ]),
        '^\\.\\./api/(?!fence\\.ts$)',
      ],
      "src/lease/ is the owner lease and the job locks: it implements api/fence.ts's Fence, and knows nothing of who holds it",
    ),
    forbid(
      ['src/queue/**/*.ts'],
      [above(1, ['server', 'commands', 'onboarding'])],
      'src/queue/ runs the pipeline in workers; servers and commands drive it',
    ),
    forbid(
      ['src/pipeline/*.ts'],
      [
        `^\\./(?:${[...ROOMS, 'run', 'undo'].join('|')})/`,
        above(1, ['queue', 'server', 'sandbox', 'commands', 'onboarding', 'runtime']),
      ],
      'src/pipeline/*.ts is what the rooms share: it imports no room',
    ),
    ...ROOMS.map((room) =>
      forbid(
        [`src/pipeline/${room}/**/*.ts`],
        [
          `^\\.\\./(?:${[...ROOMS.filter((r) => r !== room), 'run', 'undo'].join('|')})/`,
          above(2, ['queue', 'server', 'sandbox', 'commands', 'onboarding', 'runtime']),
        ],
        `pipeline/${room}/ imports downward only: src/pipeline/*.ts, formats, api, never another room, run/ or undo/ (they drive the rooms)`,
      ),
    ),
    forbid(
      ['src/pipeline/undo/**/*.ts'],
      [above(2, ['queue', 'server', 'sandbox', 'commands', 'onboarding', 'runtime'])],
      'pipeline/undo/ undoes a finished run with the rooms and run/; the commands and the console call it',
    ),
    forbid(
      ['src/pipeline/run/**/*.ts'],
      [above(2, ['queue', 'server', 'sandbox', 'commands', 'onboarding', 'runtime'])],
      'pipeline/run/ drives the rooms; the queue, the servers and the commands drive it',
    ),
  ];
}

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'dist.*/',
      'node_modules/',
      'reports/',
      'uploads/',
      'coverage/',
      'bench/.data/',
      'test/.output/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
      // prettier wraps the code at 120; comments wrap at the same width (strings and URLs may run over).
      'max-len': [
        'error',
        { code: 120, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true },
      ],
    },
  },
  ...layoutRules(),
  {
    files: ['src/**/*.ts'],
    rules: {
      // The namespace object `z` of zod's index holds every export, its locales among them (about half of zod): with
      // `import * as z`, the bundle (scripts/build.mjs) keeps only what src uses.
      'no-restricted-syntax': [
        'error',
        {
          selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']",
          message: "import * as z from 'zod'",
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    ignores: ['src/server/public/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly' } },
  },
  {
    // The console's browser code: plain scripts (no modules, no build step), type-checked by tsconfig.browser.json.
    files: ['src/server/public/**/*.js'],
    languageOptions: { sourceType: 'script', globals: globals.browser },
  },
);
