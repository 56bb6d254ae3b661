// Lint rules for the whole project, type-checked; generated code is the contracts' business, not ours.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'src/generated/**',
      'clients/typescript/src/generated/**',
      'clients/typescript/dist/**',
      '.data/**',
      '.tools/**',
      'coverage/**',
      '.stryker-tmp/**',
      'reports/**',
      'bench/results/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  // Every linted TypeScript file belongs to tsconfig.json, so the project service finds its types there.
  { languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } } },
  // Plain JavaScript (tool configs, jest global setup, k6 scripts) is in no TypeScript project.
  { files: ['**/*.{js,mjs,cjs}'], ...tseslint.configs.disableTypeChecked },
  // The client flows import code generated at test time (npm run test:clients compiles them strictly beside it).
  { files: ['clients/flows/**/*.ts'], ...tseslint.configs.disableTypeChecked },
  prettier,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
);
