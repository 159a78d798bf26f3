import { Tool, type ToolContext, type ToolHandler, workspaceInputs, defineTool, type ToolInput, type ToolOutput, workspacePathInput } from '@tos/sdk';
import { IAC_SCAN_EXAMPLES } from './examples';
import { IAC_RULE_IDS, IAC_SEVERITIES } from './rules';
import { countsOutput, fileErrorsOutput, pageOutputs } from '../../shared/scan';
import { MAX_ERRORS_LISTED, MAX_FILE_BYTES, MAX_HELD_BYTES, MAX_SCANNED_FILES } from './limits';

export type IacScanInput = ToolInput<typeof definition>;
export type IacScanOutput = ToolOutput<typeof definition>;

const definition = defineTool({
  id: 'iac-scan',
  name: 'IaC Scan',
  category: 'security',
  description:
    `Finds misconfigurations in Terraform (AWS, Azure, Google Cloud, Alibaba Cloud, Oracle Cloud), CloudFormation (YAML with short-form tags, or JSON), Helm charts (rendered with their default values), Kubernetes manifests, Docker Compose files and Dockerfiles: public buckets and ACLs, unencrypted storage and databases, security groups and firewalls open to the internet on SSH/RDP, wildcard IAM, disabled logging and versioning, missing key rotation, privileged or root containers, host namespaces, Docker socket mounts, bindings to cluster-admin, secrets in env, and more (${IAC_RULE_IDS.length} rules; resource addresses, file and line, CIS benchmark sections where one corresponds).`,
  status: 'ready',
  version: '1.1.0',
  cacheable: true,
  isolated: true,
  timeout: 120,
  rate_limit: 60,
  input: {
    type: 'object',
    properties: {
      ...workspaceInputs(),
      path: workspacePathInput(`A file or a directory in the workspace; *.tf (each directory a module), *.yaml/*.yml (Kubernetes, Compose, CloudFormation), *.json/*.template (CloudFormation), Helm charts (a directory with Chart.yaml), Dockerfile, Dockerfile.*, *.dockerfile and Containerfile are read (at most ${MAX_SCANNED_FILES} files of up to ${MAX_FILE_BYTES / 1024 / 1024} MiB; Terraform modules and charts ${MAX_HELD_BYTES / 1024 / 1024} MiB in all).`),
      files: {
        type: 'array',
        maxItems: 1000,
        items: { type: 'string', minLength: 1, maxLength: 1024 },
        description: 'Only these files, relative to the directory given as path.',
      },
      skip_rules: {
        type: 'array',
        maxItems: IAC_RULE_IDS.length,
        items: { type: 'string', enum: IAC_RULE_IDS },
        description: 'Rule ids not to report.',
      },
      min_severity: { type: 'string', enum: [...IAC_SEVERITIES].reverse(), default: 'low', description: 'Report findings of at least this severity.' },
      max_results: { type: 'integer', minimum: 1, maximum: 1000, default: 200, description: 'Most findings returned, worst first.' },
    },
  },
  output: {
    type: 'object',
    properties: {
      findings: {
        type: 'array',
        description: 'Misconfigurations by severity, file and line.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['rule', 'severity', 'title', 'file', 'line', 'object', 'message', 'remediation'],
          properties: {
            rule: { type: 'string' },
            severity: { enum: [...IAC_SEVERITIES] },
            title: { type: 'string' },
            file: { type: 'string' },
            line: { type: 'integer', description: '1-based line of the field at fault, or of the object or instruction missing it.' },
            object: { type: 'string', description: 'What the finding is about: the Terraform address (aws_s3_bucket.data), the CloudFormation logical id and type, the Kubernetes kind/name and container, the Compose service, or the Dockerfile stage.' },
            message: { type: 'string' },
            remediation: { type: 'string' },
            cis: { type: 'string', description: 'The CIS benchmark recommendation the rule checks, where one corresponds exactly (e.g. "CIS AWS 1.2.0 4.1, 4.2").' },
          },
        },
      },
      ...pageOutputs('Findings'),
      summary: countsOutput(IAC_SEVERITIES, 'Findings per severity (all of them).'),
      files_scanned: { type: 'integer', description: 'Files checked: Dockerfiles, Terraform files, CloudFormation templates, Compose files, and YAML files (or rendered Helm templates) holding Kubernetes objects.' },
      errors: fileErrorsOutput(`Files that could not be parsed or rendered, at most ${MAX_ERRORS_LISTED}; the scan goes on without them.`),
    },
    required: ['findings', 'count', 'total', 'truncated', 'summary', 'files_scanned', 'errors'],
  },
  examples: IAC_SCAN_EXAMPLES,
});

@Tool(definition)
export class IacScanTool implements ToolHandler<typeof definition> {
  async execute(input: IacScanInput, ctx: ToolContext<typeof definition>): Promise<IacScanOutput> {
    // The parsers load on the first call, not with the catalogue.
    const { iacScan } = await import('./scan');
    return iacScan(input, ctx);
  }
}
