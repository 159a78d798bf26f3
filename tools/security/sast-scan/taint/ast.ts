/** The syntax-tree questions the taint engine asks: names, keys, locations, the functions of a file. */
import type { TSESTree } from '@typescript-eslint/types';
import { NEST_DECORATORS } from './catalogue';
import type { FunctionNode, Step, Value } from './model';

type Node = TSESTree.Node;

const SKIPPED_KEYS = new Set(['parent', 'loc', 'range', 'tokens', 'comments', 'typeAnnotation', 'returnType', 'typeParameters', 'decorators']);

export function collectFunctions(root: Node, into: FunctionNode[]): void {
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    if (node.type === 'FunctionDeclaration' || node.type === 'FunctionExpression' || node.type === 'ArrowFunctionExpression') into.push(node);
    const children: Node[] = [];
    for (const key of Object.keys(node)) {
      if (SKIPPED_KEYS.has(key)) continue;
      const child = (node as unknown as Record<string, unknown>)[key];
      if (Array.isArray(child)) for (const item of child) if (isNode(item)) children.push(item);
      if (isNode(child)) children.push(child);
    }
    // Depth first, in source order: an outer function is analysed before the closures it holds.
    for (let index = children.length - 1; index >= 0; index -= 1) stack.push(children[index]);
  }
}

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

export function isExpression(node: Node): node is TSESTree.Expression {
  return !/^(?:AssignmentPattern|ArrayPattern|ObjectPattern|RestElement|TSEmptyBodyFunctionExpression|TSDeclareFunction|TSInterfaceDeclaration|TSTypeAliasDeclaration|TSEnumDeclaration|TSModuleDeclaration)$/.test(node.type);
}

export function stepAt(file: string, node: Node, note: string): Step {
  return { file, line: node.loc.start.line, column: node.loc.start.column + 1, note };
}

export function propertyName(node: TSESTree.MemberExpression): string | undefined {
  if (!node.computed && node.property.type === 'Identifier') return node.property.name;
  return node.property.type === 'Literal' ? String(node.property.value) : undefined;
}

export function literalKey(node: Node, evaluate: (node: Node) => Value): string | undefined {
  if (node.type === 'Literal') return String(node.value);
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return node.quasis[0].value.cooked ?? undefined;
  evaluate(node);
  return undefined;
}

export function staticKey(property: TSESTree.Property | TSESTree.MethodDefinition | TSESTree.PropertyDefinition, evaluate: (node: Node) => Value): string | undefined {
  if (!property.computed && property.key.type === 'Identifier') return property.key.name;
  return literalKey(property.key, evaluate);
}

export function nameOf(node: Node): string | undefined {
  if (node.type === 'Identifier') return node.name;
  if (node.type === 'MemberExpression') return propertyName(node);
  if (node.type === 'CallExpression' && node.callee.type === 'MemberExpression') return nameOf(node.callee.object);
  return undefined;
}

export function functionName(fn: FunctionNode): string {
  if (fn.id) return fn.id.name;
  const parent = fn.parent;
  if (parent.type === 'VariableDeclarator' && parent.id.type === 'Identifier') return parent.id.name;
  if ((parent.type === 'Property' || parent.type === 'MethodDefinition' || parent.type === 'PropertyDefinition') && parent.key.type === 'Identifier') return parent.key.name;
  if (parent.type === 'AssignmentExpression' && parent.left.type === 'MemberExpression') return propertyName(parent.left) ?? 'function';
  return 'function';
}

export function typeText(identifier: TSESTree.Identifier): string {
  const annotation = identifier.typeAnnotation?.typeAnnotation;
  if (annotation?.type !== 'TSTypeReference') return '';
  const name = annotation.typeName;
  return name.type === 'Identifier' ? name.name : name.type === 'TSQualifiedName' && name.left.type === 'Identifier' ? `${name.left.name}.${name.right.name}` : '';
}

/** Next.js route handlers: `export async function GET(request)`. */
export function isVerbHandler(fn: FunctionNode): boolean {
  return fn.type === 'FunctionDeclaration' && /^(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$/.test(fn.id?.name ?? '');
}

export function nestSource(decorators: readonly TSESTree.Decorator[]): { decorator: string; input: string } | undefined {
  for (const decorator of decorators) {
    const expression = decorator.expression;
    const callee = expression.type === 'CallExpression' && expression.callee.type === 'Identifier' ? expression.callee.name : undefined;
    if (callee && callee in NEST_DECORATORS) return { decorator: callee, input: NEST_DECORATORS[callee] };
  }
  return undefined;
}
