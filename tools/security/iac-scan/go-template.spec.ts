import { HELM_FUNCTIONS } from './helm-functions';
import { Renderer } from './go-template';

const render = (template: string, dot: unknown, helpers = '') => {
  const renderer = new Renderer(HELM_FUNCTIONS);
  renderer.parse(helpers, '_helpers.tpl');
  return renderer.execute(renderer.parse(template, 'test.yaml'), dot).text;
};

describe('Go template subset', () => {
  it('trims whitespace around {{- and -}} and drops comments', () => {
    expect(render('a  {{- /* note */ -}}  b\n{{- " c" }}', {})).toBe('ab c');
  });

  it('prints a missing value as nothing, as Helm does', () => {
    expect(render('[{{ .Values.nope.deeper }}]', { Values: {} })).toBe('[]');
  });

  it('branches with if / else if / else and with', () => {
    const template = '{{ if eq .n 1 }}one{{ else if gt .n 1 }}many{{ else }}none{{ end }}|{{ with .m }}{{ .k }}{{ else }}-{{ end }}';
    expect(render(template, { n: 2, m: { k: 'v' } })).toBe('many|v');
    expect(render(template, { n: 0, m: {} })).toBe('none|-');
  });

  it('ranges over lists and maps (keys sorted) with variables, and $ reaches the root', () => {
    expect(render('{{ range $i, $v := .list }}{{ $i }}={{ $v }}{{ $.sep }}{{ end }}', { list: ['a', 'b'], sep: ';' })).toBe('0=a;1=b;');
    expect(render('{{ range $k, $v := .map }}{{ $k }}{{ $v }}{{ end }}', { map: { b: 2, a: 1 } })).toBe('a1b2');
  });

  it('includes defined templates and pipes into Sprig functions', () => {
    const helpers = '{{- define "name" -}}{{ .Release.Name | trunc 5 }}-{{ .Chart.Name }}{{- end -}}';
    const output = render('name: {{ include "name" . | quote }}\nspec:{{ toYaml .Values.spec | nindent 2 }}\nport: {{ .Values.port | default 80 }}', { Release: { Name: 'release-name' }, Chart: { Name: 'web' }, Values: { spec: { a: [1, 2] } } }, helpers);
    expect(output).toBe('name: "relea-web"\nspec:\n  a:\n    - 1\n    - 2\nport: 80');
  });

  it('declares and reassigns variables, and calls functions of the context', () => {
    expect(render('{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}', {})).toBe('2');
    expect(render('{{ if .Capabilities.APIVersions.Has "policy/v1" }}yes{{ end }}', { Capabilities: { APIVersions: { Has: () => true } } })).toBe('yes');
  });

  it('maps each rendered line to the template line that wrote it', () => {
    const renderer = new Renderer(HELM_FUNCTIONS);
    renderer.parse('{{- define "labels" -}}\na: 1\nb: 2\n{{- end -}}', '_helpers.tpl');
    const template = ['kind: Pod', '{{- if .on }}', 'on: true', '{{- end }}', 'labels:', '  {{- include "labels" . | nindent 2 }}', 'spec:', '  x: {{ .x }}'].join('\n');
    const { text, lines } = renderer.execute(renderer.parse(template, 'pod.yaml'), { on: true, x: 1 });
    expect(text).toBe('kind: Pod\non: true\nlabels:\n  a: 1\n  b: 2\nspec:\n  x: 1');
    // The two lines the include wrote map to the include; the rest to themselves.
    expect(lines).toEqual([1, 3, 5, 6, 6, 7, 8]);
  });

  it('reports what it cannot render', () => {
    expect(() => render('{{ nosuch 1 }}', {})).toThrow('function "nosuch" not defined');
    expect(() => render('{{ if true }}open', {})).toThrow('missing {{end}}');
    expect(() => render('{{ required "name is required" .name }}', {})).toThrow('required value missing: name is required');
  });
});
