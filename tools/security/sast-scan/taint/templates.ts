/**
 * Reflected XSS through templates: `res.render(view, model)` with request data in the model is a
 * finding when the view prints that member unescaped — EJS `<%- x %>`, Handlebars/Mustache
 * `{{{x}}}`, Pug `!{x}` or `!= x`, Nunjucks/Swig `{{ x | safe }}`. The view is found by name
 * under the scanned path.
 */
import * as path from 'node:path';
import type { ToolContext } from '@tos/sdk';
import type { RenderSite, TaintFinding } from './engine';
import { TAINT_RULES } from './rules';

const TEMPLATE = /\.(ejs|html|hbs|handlebars|mustache|pug|jade|njk|swig)$/i;
const MAX_TEMPLATE_BYTES = 512 * 1024;
const MAX_LISTED = 20_000;

export async function templateFindings(ctx: ToolContext, root: string, renders: readonly RenderSite[]): Promise<TaintFinding[]> {
  if (renders.length === 0) return [];
  const templates = (await ctx.workspace.listFiles(root, { maxFiles: MAX_LISTED }, 'path')).filter((file) => TEMPLATE.test(file.path) && file.size <= MAX_TEMPLATE_BYTES);
  const texts = new Map<string, string>();
  const findings: TaintFinding[] = [];
  for (const render of renders) {
    const view = render.view.replace(/^\/+/, '').replace(TEMPLATE, '');
    const template = templates.find((file) => file.path.replace(TEMPLATE, '').endsWith(`/${view}`) || file.path.replace(TEMPLATE, '') === view);
    if (!template) continue;
    const text = texts.get(template.path) ?? (await ctx.workspace.readText(template.path, MAX_TEMPLATE_BYTES, 'path'));
    texts.set(template.path, text);
    for (const member of render.members) {
      const line = unescapedLine(text, path.extname(template.path).slice(1).toLowerCase(), member.path);
      if (line === undefined) continue;
      const sink = { file: template.path, line, column: 1, note: `sink: ${member.path} printed unescaped` };
      const source = member.taint.steps[0];
      findings.push({
        rule: 'taint/xss',
        file: template.path,
        line,
        column: 1,
        end_line: line,
        end_column: 1,
        message: `The template prints ${member.path} unescaped; it holds ${source.note.replace(/^source: /, '')} (${source.file}:${source.line}) — ${TAINT_RULES['taint/xss'].description}`,
        flow: [...member.taint.steps, render.at, sink],
      });
    }
  }
  return findings;
}

/** The line where a template prints `member` without escaping, if it does. */
export function unescapedLine(text: string, extension: string, member: string): number | undefined {
  const name = member.replace(/[.$]/g, (character) => `\\${character}`);
  const patterns: Record<string, string> = {
    ejs: `<%-\\s*${name}\\s*%>`,
    hbs: `\\{\\{\\{\\s*${name}\\s*\\}\\}\\}`,
    pug: `!\\{\\s*${name}\\s*\\}|!=\\s*${name}\\b`,
    njk: `\\{\\{\\s*${name}\\s*\\|\\s*safe\\b`,
  };
  const kind = extension === 'handlebars' || extension === 'mustache' ? 'hbs' : extension === 'jade' ? 'pug' : extension === 'html' || extension === 'swig' ? 'njk' : extension;
  const pattern = patterns[kind];
  const match = pattern ? new RegExp(pattern).exec(text) : null;
  return match ? text.slice(0, match.index).split('\n').length : undefined;
}
