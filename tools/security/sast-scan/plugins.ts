/** The ESLint plugins sast-scan loads. They ship no type declarations: typed here as ESLint plugins. */
import type { ESLint } from 'eslint';

export const PLUGINS: Record<string, ESLint.Plugin> = {
  security: require('eslint-plugin-security') as ESLint.Plugin,
  '@microsoft/sdl': require('@microsoft/eslint-plugin-sdl') as ESLint.Plugin,
  'no-unsanitized': require('eslint-plugin-no-unsanitized') as ESLint.Plugin,
};
