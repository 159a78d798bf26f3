import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { SastScanTool, type SastScanOutput } from './sast-scan.tool';
import { TAINT_RULES } from './taint/rules';
import { unescapedLine } from './taint/templates';
import { vendoredReason } from './taint/vendored';

let root: string;
let counter = 0;
beforeAll(() => (root = mkdtempSync(path.join(tmpdir(), 'sast-taint-'))));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const TAINT_ONLY = Object.keys(TAINT_RULES).join(',');

/** Writes the files into a folder of their own and scans it with the taint rules alone. */
async function scan(files: Record<string, string>, input: Record<string, unknown> = {}): Promise<SastScanOutput> {
  const folder = `case-${(counter += 1)}`;
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, folder, file)), { recursive: true });
    writeFileSync(path.join(root, folder, file), text);
  }
  return runTool<SastScanOutput>(SastScanTool, { path: folder, rules: TAINT_ONLY, max_results: 1000, ...input }, { workspaceRoot: root });
}

/** 'rule file:line' of each finding, files by base name. */
const where = (output: SastScanOutput) => output.findings.map((finding) => `${finding.rule} ${path.posix.basename(finding.file)}:${finding.line}`).sort();
/** A finding's path as 'file:line note' steps. */
const steps = (finding: SastScanOutput['findings'][number]) => (finding.flow ?? []).map((step) => `${path.posix.basename(step.file)}:${step.line} ${step.note}`);

const express = (body: string) => `const express = require('express');\nconst app = express();\n${body}`;

describe('sast-scan taint engine: sinks by class', () => {
  it.each([
    ['taint/code-injection', "app.get('/a', (req, res) => {\n  eval(req.query.code);\n});\n"],
    ['taint/code-injection', "const vm = require('vm');\napp.get('/a', (req, res) => {\n  vm.runInNewContext(req.body.script);\n});\n"],
    ['taint/command-injection', "const { exec } = require('child_process');\napp.get('/a', (req, res) => {\n  exec('ping ' + req.query.host);\n});\n"],
    ['taint/command-injection', "const cp = require('node:child_process');\napp.get('/a', (req, res) => {\n  cp.spawn(req.query.cmd, [], { shell: true });\n});\n"],
    ['taint/sql-injection', "const { Pool } = require('pg');\nconst pool = new Pool();\napp.get('/a', (req, res) => {\n  pool.query(`SELECT * FROM users WHERE name = '${req.query.name}'`);\n});\n"],
    ['taint/sql-injection', "const knex = require('knex')({});\napp.get('/a', (req, res) => {\n  knex.raw('select ' + req.query.column);\n});\n"],
    ['taint/nosql-injection', "app.post('/a', (req, res) => {\n  db.collection('users').find({ $where: `this.age > ${req.body.age}` });\n});\n"],
    ['taint/nosql-injection', "app.post('/a', (req, res) => {\n  users.findOne({ name: req.body.name, password: req.body.password });\n});\n"],
    ['taint/path-traversal', "const fs = require('fs');\napp.get('/a', (req, res) => {\n  fs.readFileSync('/srv/files/' + req.params.name);\n});\n"],
    ['taint/path-traversal', "app.get('/a', (req, res) => {\n  res.sendFile(req.query.file);\n});\n"],
    ['taint/ssrf', "const axios = require('axios');\napp.get('/a', async (req, res) => {\n  await axios.get(req.query.url);\n});\n"],
    ['taint/ssrf', "const https = require('https');\napp.get('/a', (req, res) => {\n  https.get(`https://${req.headers.host}/x`);\n});\n"],
    ['taint/ssrf', "app.get('/a', async (req, res) => {\n  await fetch(req.query.target);\n});\n"],
    ['taint/open-redirect', "app.get('/a', (req, res) => {\n  res.redirect(req.query.next);\n});\n"],
    ['taint/xss', "app.get('/a', (req, res) => {\n  res.send('<p>' + req.query.name + '</p>');\n});\n"],
    ['taint/insecure-deserialization', "const serialize = require('node-serialize');\napp.post('/a', (req, res) => {\n  serialize.unserialize(req.cookies.profile);\n});\n"],
    ['taint/xxe', "const libxmljs = require('libxmljs');\napp.post('/a', (req, res) => {\n  libxmljs.parseXmlString(req.body.xml, { noent: true });\n});\n"],
    ['taint/prototype-pollution', "const _ = require('lodash');\napp.post('/a', (req, res) => {\n  _.merge({}, req.body);\n});\n"],
    ['taint/log-injection', "app.post('/a', (req, res) => {\n  console.log('login failed for', req.body.user);\n});\n"],
    ['taint/redos', "app.get('/a', (req, res) => {\n  new RegExp(req.query.pattern);\n});\n"],
  ])('%s', async (rule, body) => {
    const output = await scan({ 'app.js': express(body) });
    const line = express(body).split('\n').length - 2;
    expect(where(output)).toEqual([`${rule} app.js:${line}`]);
    const flow = output.findings[0].flow ?? [];
    expect(flow[0].note).toMatch(/^source: /);
    expect(flow[flow.length - 1]).toMatchObject({ line, note: expect.stringMatching(/^sink: /) });
  });

  it('finds innerHTML, document.write and location.href fed from the URL in browser code, and no server sink', async () => {
    const output = await scan({ 'page.ts': "const name = location.hash.slice(1);\ndocument.body.innerHTML = `<h1>${name}</h1>`;\ndocument.write(decodeURIComponent(location.search));\nwindow.location.href = name;\nfetch('/api/' + name);\nconsole.log(name);\n" });
    // A page's own fetch and console are not server sinks: only browser sinks count for the URL's data.
    expect(where(output)).toEqual(['taint/open-redirect page.ts:4', 'taint/xss page.ts:2', 'taint/xss page.ts:3']);
  });

  it('finds a request member printed unescaped by the EJS template res.render names', async () => {
    const output = await scan({
      'routes.js': "app.post('/search', (req, res) => {\n  const output = { term: req.body.q };\n  res.render('app/search', { output: output });\n});\n",
      'views/app/search.ejs': '<h1>Results</h1>\n<p><%- output.term %></p>\n<p><%= output.term %></p>\n',
    });
    expect(where(output)).toEqual(['taint/xss search.ejs:2']);
    expect(steps(output.findings[0])).toEqual(['routes.js:2 source: req.body.q', "routes.js:3 res.render('app/search')", 'search.ejs:2 sink: output.term printed unescaped']);
    expect(unescapedLine('{{{ user.name }}}', 'hbs', 'user.name')).toBe(1);
    expect(unescapedLine('{{ user.name }}', 'hbs', 'user.name')).toBeUndefined();
  });

  it('takes Koa, Fastify and Nest request data, and process.argv, as sources', async () => {
    const output = await scan({
      'koa.js': "router.get('/k', async (ctx) => {\n  ctx.redirect(ctx.query.to);\n});\n",
      'fastify.ts': "fastify.get('/f', async (request: FastifyRequest, reply: FastifyReply) => {\n  eval(request.params.id);\n});\n",
      'nest.ts': "import { exec } from 'child_process';\n@Controller('x')\nexport class X {\n  @Post()\n  run(@Body() dto: Dto) {\n    exec(dto.command);\n  }\n}\n",
      'cli.js': "const fs = require('fs');\nfs.unlinkSync(process.argv[2]);\n",
    });
    expect(where(output)).toEqual(['taint/code-injection fastify.ts:2', 'taint/command-injection nest.ts:6', 'taint/open-redirect koa.js:2', 'taint/path-traversal cli.js:2']);
  });
});

describe('sast-scan taint engine: propagation', () => {
  it('follows assignments, destructuring, template literals, concatenation, string and array methods, and spread', async () => {
    const output = await scan({
      'app.js': express(
        [
          "app.post('/a', (req, res) => {",
          '  const { name } = req.body;',
          '  let command = `echo ${name}`;',
          "  command = command.trim() + ' ' + [name].join(',');",
          "  const options = { ...req.query };",
          "  require('child_process').exec(command);",
          '  eval(options.code);',
          '});',
          '',
        ].join('\n'),
      ),
    });
    expect(where(output)).toEqual(['taint/code-injection app.js:9', 'taint/command-injection app.js:8']);
    const command = output.findings.find((finding) => finding.rule === 'taint/command-injection');
    expect(command && steps(command)).toEqual(['app.js:4 source: req.body', 'app.js:4 name', 'app.js:6 command', 'app.js:8 sink: child_process.exec()']);
  });

  it('follows returns and calls between functions of a module, and closures', async () => {
    const output = await scan({
      'app.js': express(
        [
          'function wrap(text) {',
          "  return '<b>' + text + '</b>';",
          '}',
          'function show(res, html) {',
          '  res.send(html);',
          '}',
          "app.get('/a', (req, res) => {",
          '  const q = req.query.q;',
          '  setImmediate(() => show(res, wrap(q)));',
          '});',
          '',
        ].join('\n'),
      ),
    });
    expect(where(output)).toEqual(['taint/xss app.js:7']);
    expect(steps(output.findings[0])).toEqual([
      'app.js:10 source: req.query.q',
      'app.js:10 q',
      'app.js:11 into wrap()',
      'app.js:3 parameter text',
      'app.js:4 returned',
      'app.js:11 returned by wrap()',
      'app.js:11 into show()',
      'app.js:6 parameter html',
      'app.js:7 sink: res.send()',
    ]);
  });

  it('follows calls across modules: require of a constructor function, ES imports of a class and of a function, an injected service by method name', async () => {
    const output = await scan({
      'routes/users.js': "const UserDAO = require(\"../data/user-dao\").UserDAO;\nfunction Handler(db) {\n  const dao = new UserDAO(db);\n  this.find = (req, res) => dao.byAge(req.query.age);\n}\nmodule.exports = Handler;\n",
      'data/user-dao.js': 'function UserDAO(db) {\n  this.byAge = (age) => db.users.find({ $where: `this.age > ${age}` });\n}\nmodule.exports.UserDAO = UserDAO;\n',
      'src/controller.ts': "import { Runner } from './runner';\nimport run from './run';\nexport function handle(req: Request, res: Response) {\n  new Runner().go(req.body.script);\n  run(req.query.cmd as string);\n}\n",
      'src/runner.ts': 'export class Runner {\n  go(code: string) {\n    return eval(code);\n  }\n}\n',
      'src/run.ts': "import { execSync } from 'node:child_process';\nexport default function run(command: string) {\n  execSync(command);\n}\n",
      'nest/users.controller.ts': "import { UsersService } from './users.service';\n@Controller('users')\nexport class UsersController {\n  constructor(private readonly users: UsersService) {}\n  @Get()\n  find(@Query('name') name: string) {\n    return this.users.named(name);\n  }\n}\n",
      'nest/users.service.ts': "@Injectable()\nexport class UsersService {\n  constructor(private readonly db: DataSource) {}\n  named(name: string) {\n    return this.db.query(`SELECT * FROM users WHERE name = '${name}'`);\n  }\n}\n",
    });
    expect(where(output)).toEqual(['taint/code-injection runner.ts:3', 'taint/command-injection run.ts:3', 'taint/nosql-injection user-dao.js:2', 'taint/sql-injection users.service.ts:5']);
    const nosql = output.findings.find((finding) => finding.rule === 'taint/nosql-injection');
    expect(nosql && steps(nosql)).toEqual(['users.js:4 source: req.query.age', 'users.js:4 into byAge()', 'user-dao.js:2 parameter age', 'user-dao.js:2 sink: a $where clause']);
  });
});

describe('sast-scan taint engine: sanitizers', () => {
  it.each([
    ['numeric parsing', "app.get('/a', (req, res) => {\n  eval(parseInt(req.query.n, 10));\n  eval(Number(req.query.m));\n});\n"],
    ['path.basename', "const fs = require('fs');\nconst path = require('path');\napp.get('/a', (req, res) => {\n  fs.readFileSync(path.join('/srv', path.basename(req.query.f)));\n});\n"],
    ['a containment check', "const fs = require('fs');\nconst path = require('path');\napp.get('/a', (req, res) => {\n  const full = path.resolve('/srv', req.query.f);\n  if (!full.startsWith('/srv/')) return res.sendStatus(400);\n  fs.readFileSync(full);\n});\n"],
    ['an allow-list', "const ALLOWED = ['a', 'b'];\napp.get('/a', (req, res) => {\n  const to = req.query.to;\n  if (!ALLOWED.includes(to)) return;\n  res.redirect(to);\n});\n"],
    ['escape-html', "const escape = require('escape-html');\napp.get('/a', (req, res) => {\n  res.send('<p>' + escape(req.query.name) + '</p>');\n});\n"],
    ["validator's escape", "const validator = require('validator');\napp.get('/a', (req, res) => {\n  res.write(validator.escape(req.query.name));\n});\n"],
    ['a parameterised query', "const mysql = require('mysql2');\nconst db = mysql.createConnection({});\napp.get('/a', (req, res) => {\n  db.query('SELECT * FROM t WHERE id = ?', [req.query.id]);\n});\n"],
    ['line breaks removed before logging', "app.get('/a', (req, res) => {\n  console.log(req.query.user.replace(/[\\r\\n]/g, '_'));\n});\n"],
    ['a string, not the request object, as a Mongo filter', "app.get('/a', (req, res) => {\n  users.findOne({ name: String(req.body.name) });\n});\n"],
    ['a response read from elsewhere (no source)', "app.get('/a', (req, res) => {\n  const session = req.session;\n  eval(session.code);\n});\n"],
  ])('%s: no finding', async (_name, body) => {
    expect(where(await scan({ 'app.js': express(body) }))).toEqual([]);
  });
});

describe('sast-scan taint engine: bounds', () => {
  it('survives expressions nested 600 deep and a function past its work limit, and still reports the rest', async () => {
    const deep = `const banner = ${Array.from({ length: 600 }, (_, index) => `'part${index}'`).join(' + ')};\n`;
    const long = `function generated(x) {\n${Array.from({ length: 12000 }, (_, index) => `  x = x + ${index};`).join('\n')}\n  eval(x);\n}\n`;
    const output = await scan({ 'big.js': deep + long, 'app.js': express("app.get('/a', (req, res) => res.redirect(req.query.u));\n") });
    expect(where(output)).toEqual(['taint/open-redirect app.js:3']);
    expect(output.errors).toEqual([]);
  }, 60_000);
});

describe('sast-scan: vendored and minified code', () => {
  it('tells minified content and vendor folders apart from the project’s code', () => {
    const minified = `/* banner */\n${'var a=function(b){return b+1};'.repeat(300)}\n`;
    expect(vendoredReason('assets/chart/raphael-min.js', 'x')).toMatch(/minified/);
    expect(vendoredReason('assets/lib/chart.js', minified)).toMatch(/^minified/);
    expect(vendoredReason('app/assets/vendor/bootstrap/tour.js', 'x')).toBe('in a vendor folder');
    expect(vendoredReason('src/app.js', 'const a = 1;\n'.repeat(500))).toBeUndefined();
  });

  it('skips them by default, lists them, and scans them with include_vendored', async () => {
    const files = { 'public/lib.js': `${'var x=1;'.repeat(400)}eval(location.hash);\n`, 'app.js': express("app.get('/a', (req, res) => res.redirect(req.query.u));\n") };
    const output = await scan(files);
    expect(where(output)).toEqual(['taint/open-redirect app.js:3']);
    expect(output.skipped).toEqual([{ file: expect.stringMatching(/public\/lib\.js$/), message: expect.stringMatching(/^Not scanned: minified/) }]);
    const all = await scan(files, { include_vendored: true });
    expect(where(all)).toEqual(['taint/code-injection lib.js:1', 'taint/open-redirect app.js:3']);
  });
});
