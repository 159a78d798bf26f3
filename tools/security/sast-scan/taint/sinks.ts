/** Which call arguments are sinks, by class: the module a function comes from, else its name and receiver. */
import type { TSESTree } from '@typescript-eslint/types';
import type { Value } from './model';
import type { TaintRuleId } from './rules';

/** A call as the engine sees it. */
export interface CallSite {
  /** The called name: `exec` for cp.exec(…), `eval` for eval(…). */
  name: string;
  /** The called function's module path when known: 'child_process.exec', 'axios', 'lodash.merge'. */
  module?: string;
  receiver?: Value;
  /** The receiver's own name: 'res' in res.redirect(…), 'logger' in this.logger.info(…). */
  receiverName?: string;
  args: readonly Value[];
  argNodes: readonly TSESTree.Node[];
}

/** A value that must not be tainted. `raw`: only the request's own data counts (objects used as queries). */
export interface SinkArgument {
  rule: TaintRuleId;
  value: Value;
  label: string;
  raw?: boolean;
}

const FS_PATH_FUNCTIONS = /^(?:readFile|readFileSync|writeFile|writeFileSync|appendFile|appendFileSync|createReadStream|createWriteStream|open|openSync|unlink|unlinkSync|rm|rmSync|rmdir|rmdirSync|readdir|readdirSync|mkdir|mkdirSync|stat|statSync|lstat|lstatSync|access|accessSync|exists|existsSync|rename|renameSync|copyFile|copyFileSync|readJson|readJsonSync|outputFile|remove|truncate|chmod|chown|symlink|link)$/;
const HTTP_CLIENTS = /^(?:axios|got|needle|request|superagent|node-fetch|undici|phin|bent|make-fetch-happen|cross-fetch|isomorphic-fetch)$/;
const HTTP_VERBS = /^(?:get|post|put|patch|delete|del|head|options|request|stream|fetch)$/;
const MERGERS = /^(?:lodash\.(?:merge|mergeWith|defaultsDeep|set|setWith|zipObjectDeep)|lodash\.merge|lodash\.defaultsdeep|lodash\.set|deepmerge|deepmerge\.all|deep-extend|merge-deep|mixin-deep|merge\.recursive|defaults-deep|dot-prop\.set|set-value|object-path\.set)$/;
const LOG_METHODS = /^(?:log|info|warn|error|debug|trace|fatal|verbose|silly|notice|crit|alert|emerg)$/;
const LOGGER_NAMES = /^(?:console|logger|log|winston|pino|bunyan|logging|_logger)$/i;
const LOGGER_MODULES = /^(?:winston|pino|bunyan|log4js|loglevel|signale|consola|npmlog)$/;
const SQL_METHODS = /^(?:query|raw|whereRaw|orWhereRaw|havingRaw|orderByRaw|groupByRaw|joinRaw|\$queryRawUnsafe|\$executeRawUnsafe|unsafe)$/;
// Not update/remove/count: those names are as common outside Mongo (cipher.update) as in it.
const MONGO_QUERIES = /^(?:find|findOne|findOneAndUpdate|findOneAndDelete|findOneAndReplace|findOneAndRemove|updateOne|updateMany|deleteOne|deleteMany|countDocuments)$/;
const SHELLS = /^(?:(?:\/usr)?\/bin\/)?(?:sh|bash|zsh|dash|cmd(?:\.exe)?|powershell(?:\.exe)?)$/;

/** `module.function` with 'node:' and sub-path spellings folded: 'node:fs/promises.readFile' → 'fs.readFile'. */
export function normalModule(name: string): string {
  return name
    .replace(/^node:/, '')
    .replace(/^(fs)(?:\/promises|-extra|\.promises)/, '$1')
    .replace(/^(mysql2)\/promise/, '$1')
    .replace(/^lodash\/(\w+)/, 'lodash.$1')
    .replace(/^(lodash|underscore)(?=\.|$)/, 'lodash');
}

export function sinkArguments(site: CallSite): SinkArgument[] {
  const at = (rule: TaintRuleId, index: number, label: string, raw?: boolean): SinkArgument[] => (site.args[index] ? [{ rule, value: site.args[index], label, raw }] : []);
  const global = site.module?.startsWith('global:') ? site.module.slice('global:'.length) : undefined;
  const module = site.module && !global ? normalModule(site.module) : undefined;
  const parts = module?.split('.') ?? [];
  const root = parts[0];
  const last = parts[parts.length - 1];
  const options = (index: number) => objectOption(site.argNodes[index]);

  if (global === 'eval' || global === 'Function') return site.args.map((value) => ({ rule: 'taint/code-injection', value, label: `${global}()` }));
  if (global === 'setTimeout' || global === 'setInterval') return site.argNodes[0]?.type === 'ArrowFunctionExpression' || site.argNodes[0]?.type === 'FunctionExpression' ? [] : at('taint/code-injection', 0, `${global}() with a string`);
  if (global === 'RegExp') return at('taint/redos', 0, 'new RegExp()');
  if (global === 'fetch') return urlArguments(site, 0, 'fetch()');
  if (root === 'vm' && /^(?:runInNewContext|runInThisContext|runInContext|compileFunction|Script)$/.test(last)) return at('taint/code-injection', 0, `vm.${last}()`);
  if (root === 'mathjs' && /^(?:eval|evaluate|compile|parse)$/.test(last)) return at('taint/code-injection', 0, `mathjs.${last}()`);
  if (root === 'child_process') {
    if (/^exec(?:Sync)?$/.test(last)) return at('taint/command-injection', 0, `child_process.${last}()`);
    if (/^(?:spawn|spawnSync|execFile|execFileSync)$/.test(last)) {
      const shell = site.argNodes.some((_node, index) => options(index)?.get('shell') === true);
      const program = site.argNodes[0];
      const viaShell = program?.type === 'Literal' && SHELLS.test(String(program.value));
      return shell || viaShell ? [...at('taint/command-injection', 0, `child_process.${last}() with a shell`), ...at('taint/command-injection', 1, `child_process.${last}() with a shell`)] : [];
    }
  }
  if (root === 'shelljs' && last === 'exec') return at('taint/command-injection', 0, 'shelljs.exec()');
  if (root === 'fs' && FS_PATH_FUNCTIONS.test(last)) {
    const two = /^(?:rename|copyFile|symlink|link)/.test(last);
    return [...at('taint/path-traversal', 0, `fs.${last}()`), ...(two ? at('taint/path-traversal', 1, `fs.${last}()`) : [])];
  }
  if ((root === 'http' || root === 'https') && (last === 'request' || last === 'get')) return urlArguments(site, 0, `${root}.${last}()`);
  if (root && HTTP_CLIENTS.test(root)) {
    if (parts.length === 1) return root === 'needle' ? urlArguments(site, 1, 'needle()') : urlArguments(site, 0, `${root}()`);
    if (HTTP_VERBS.test(last)) return urlArguments(site, root === 'needle' && last === 'request' ? 1 : 0, `${root}.${last}()`);
  }
  if (root === 'node-serialize' && last === 'unserialize') return at('taint/insecure-deserialization', 0, 'node-serialize unserialize()');
  if (root === 'serialize-to-js' && last === 'deserialize') return at('taint/insecure-deserialization', 0, 'serialize-to-js deserialize()');
  if (root === 'js-yaml' && (last === 'unsafeLoad' || (last === 'load' && /FULL|UNSAFE/.test(String(options(1)?.get('schema') ?? ''))))) return at('taint/insecure-deserialization', 0, `js-yaml ${last}()`);
  if (/^libxmljs2?$/.test(root ?? '') && /^parseXml(?:String)?$/.test(last) && options(1)?.get('noent') === true) return at('taint/xxe', 0, `libxmljs ${last}() with noent`);
  if (module && MERGERS.test(module)) {
    const from = /\.(?:set|setWith)$|^set-value$|\.set$/.test(module) ? 1 : module.startsWith('deepmerge') ? 0 : 1;
    return site.args.slice(from).map((value) => ({ rule: 'taint/prototype-pollution', value, label: `${module}()`, raw: true }));
  }
  if (module && !site.receiver) return [];
  return methodSinks(site, at);
}

/** Sinks told by method name and receiver: responses, loggers, query builders, the DOM. */
function methodSinks(site: CallSite, at: (rule: TaintRuleId, index: number, label: string, raw?: boolean) => SinkArgument[]): SinkArgument[] {
  const receiver = site.receiver;
  const name = site.name;
  const response = receiver?.response || (site.receiverName !== undefined && /^(?:res|response)$/.test(site.receiverName));
  const koa = receiver?.request === 'koa';
  if ((response || koa) && name === 'redirect') return at('taint/open-redirect', site.args.length - 1, `${site.receiverName ?? 'res'}.redirect()`);
  if (response && name === 'location') return at('taint/open-redirect', 0, 'res.location()');
  if (response && /^(?:send|write|end)$/.test(name)) return at('taint/xss', 0, `res.${name}()`);
  if (response && /^(?:sendFile|download|sendfile)$/.test(name)) return objectOption(site.argNodes[1])?.has('root') ? [] : at('taint/path-traversal', 0, `res.${name}()`);
  if (LOG_METHODS.test(name) && ((site.receiverName !== undefined && LOGGER_NAMES.test(site.receiverName)) || LOGGER_MODULES.test(receiver?.module ?? ''))) {
    return site.args.map((value) => ({ rule: 'taint/log-injection', value, label: `${site.receiverName ?? 'logger'}.${name}()` }));
  }
  if (/^(?:write|writeln)$/.test(name) && site.receiverName === 'document') return at('taint/xss', 0, `document.${name}()`);
  if (/^(?:assign|replace)$/.test(name) && receiver?.module === 'global:location') return at('taint/open-redirect', 0, `location.${name}()`);
  if (name === 'insertAdjacentHTML') return at('taint/xss', 1, 'insertAdjacentHTML()');
  if (SQL_METHODS.test(name) && receiver) {
    const text = receiver && site.args[0]?.props?.get('text');
    return text ? [{ rule: 'taint/sql-injection', value: text, label: `${name}() text` }] : at('taint/sql-injection', 0, `${site.receiverName ?? 'db'}.${name}()`);
  }
  if (MONGO_QUERIES.test(name) && receiver) return mongoFilter(site, name);
  return [];
}

/** The URL of an outgoing request: a string argument, or the url/host members of an options object. */
function urlArguments(site: CallSite, index: number, label: string): SinkArgument[] {
  const value = site.args[index];
  if (!value) return [];
  const members = ['url', 'host', 'hostname', 'baseURL', 'uri', 'path'].map((key) => value.props?.get(key)).filter((member): member is Value => member !== undefined);
  return (members.length > 0 ? members : [value]).map((member) => ({ rule: 'taint/ssrf', value: member, label }));
}

/** A Mongo filter: the request's own object as the filter, or as one of its members (Sequelize's `where` is not Mongo). */
function mongoFilter(site: CallSite, name: string): SinkArgument[] {
  const filter = site.args[0];
  if (!filter) return [];
  if (!filter.props) return [{ rule: 'taint/nosql-injection', value: filter, label: `${name}() filter`, raw: true }];
  if (filter.props.has('where') || filter.props.has('include')) return [];
  return [...filter.props.values()].map((value) => ({ rule: 'taint/nosql-injection', value, label: `${name}() filter member`, raw: true }));
}

/** The literal members of an object-literal argument: `{ shell: true }` → shell ↦ true. */
function objectOption(node: TSESTree.Node | undefined): Map<string, unknown> | undefined {
  if (node?.type !== 'ObjectExpression') return undefined;
  const members = new Map<string, unknown>();
  for (const property of node.properties) {
    if (property.type !== 'Property') continue;
    const key = property.key.type === 'Identifier' ? property.key.name : property.key.type === 'Literal' ? String(property.key.value) : undefined;
    if (key === undefined) continue;
    const value = property.value;
    members.set(key, value.type === 'Literal' ? value.value : value.type === 'MemberExpression' || value.type === 'Identifier' ? textOf(value) : undefined);
  }
  return members;
}

function textOf(node: TSESTree.Node): string {
  if (node.type === 'Identifier') return node.name;
  if (node.type === 'MemberExpression' && !node.computed && node.property.type === 'Identifier') return `${textOf(node.object)}.${node.property.name}`;
  return '';
}
