import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { buildCodeWorkspace } from '../../../test/support/code-tools/workspace';
import { IacScanTool } from './iac-scan.tool';
import { IAC_RULE_IDS } from './rules';
import type { IacScanOutput } from './iac-scan.tool';

let root: string;
beforeAll(() => (root = buildCodeWorkspace(mkdtempSync(path.join(tmpdir(), 'iac-scan-')))));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const scan = (input: Record<string, unknown>, signal?: AbortSignal, onProgress?: () => void) =>
  runTool<IacScanOutput>(IacScanTool, input, { workspaceRoot: root, signal, onProgress });

describe('IacScanTool', () => {

  it('fires every rule on the insecure fixtures and none on the hardened ones', async () => {
    const all = await scan({ path: 'code/iac', max_results: 1000 });
    expect(new Set(all.findings.map((finding) => finding.rule))).toEqual(new Set(IAC_RULE_IDS));
    expect(IAC_RULE_IDS.length).toBeGreaterThanOrEqual(20);
    const hardened = await scan({ path: 'code/iac', files: ['k8s/hardened-deployment.yaml', 'docker/Dockerfile'] });
    expect(hardened).toMatchObject({ findings: [], files_scanned: 2 });
  });

  it('points at the line of the field at fault, or of the object missing it', async () => {
    const { findings } = await scan({ path: 'code/iac/k8s/debug-pod.yaml' });
    const lines = Object.fromEntries(findings.map((finding) => [finding.rule, finding.line]));
    expect(lines).toEqual({
      'k8s/host-ipc': 7,
      'k8s/allow-privilege-escalation': 9, // no securityContext: the container's first line
      'k8s/run-as-non-root-unset': 9,
      'k8s/writable-root-filesystem': 9,
      'k8s/capabilities-not-dropped': 9,
      'k8s/seccomp-unconfined': 9,
      'k8s/missing-liveness-probe': 9,
      'k8s/missing-readiness-probe': 9,
    });
    expect(findings.find((finding) => finding.rule === 'k8s/host-ipc')).toMatchObject({ object: 'Pod/debug-shell', severity: 'high' });
  });

  it('skips rules and severities on request, and caps the list keeping the worst', async () => {
    const skipped = await scan({ path: 'code/iac/docker', skip_rules: ['dockerfile/no-user', 'dockerfile/missing-healthcheck'] });
    expect(skipped.findings.some((finding) => finding.rule === 'dockerfile/no-user')).toBe(false);
    expect(skipped.findings.some((finding) => finding.rule === 'dockerfile/curl-pipe-shell')).toBe(true);
    expect(skipped.findings.some((finding) => finding.rule === 'dockerfile/missing-healthcheck')).toBe(false);
    const capped = await scan({ path: 'code/iac', max_results: 1 });
    expect(capped).toMatchObject({ count: 1, truncated: true, findings: [{ rule: 'k8s/privileged-container', severity: 'critical' }] });
    expect(capped.total).toBe(capped.summary.critical! + capped.summary.high! + capped.summary.medium! + capped.summary.low!);
  });

  it('lists a manifest over the size limit in errors and scans the rest', async () => {
    mkdirSync(path.join(root, 'large'));
    writeFileSync(path.join(root, 'large/crds.yaml'), `# generated\n${'x'.repeat(2 * 1024 * 1024)}\n`);
    copyFileSync(path.join(root, 'code/iac/k8s/debug-pod.yaml'), path.join(root, 'large/pod.yaml'));
    const output = await scan({ path: 'large' });
    expect(output).toMatchObject({ files_scanned: 1, errors: [{ file: 'large/crds.yaml', message: expect.stringMatching(/^Not scanned: \d+ bytes, over the limit of 2097152$/) }] });
    expect(output.total).toBeGreaterThan(0);
  });

  it('refuses bad input naming the parameter', async () => {
    await expect(scan({ path: '/etc' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
    await expect(scan({ path: 'code/iac/missing.yaml' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
    await expect(scan({ path: 'code/iac', skip_rules: ['k8s/no-such-rule'] })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'skip_rules[0]' } });
    await expect(scan({ path: 'code/iac', files: ['../../etc/passwd'] })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'files' } });
  });

  /** `rule object line` of each finding, for asserting where findings point. */
  const where = (output: IacScanOutput) => output.findings.map((entry) => `${entry.rule} ${entry.object} ${entry.line}`);

  it('reads Terraform: resource addresses, the line of the attribute at fault, CIS sections', async () => {
    const output = await scan({ path: 'code/iac/terraform/aws', max_results: 1000 });
    expect(output).toMatchObject({ files_scanned: 1, errors: [] });
    expect(where(output)).toEqual(
      expect.arrayContaining([
        'aws/s3-public-acl aws_s3_bucket.data 15',
        'aws/s3-versioning-disabled aws_s3_bucket.data 18',
        'aws/s3-no-public-access-block aws_s3_bucket.data 13', // missing: the block's header
        'aws/sg-admin-port-open-to-world aws_security_group.web 31', // the first ingress block
        'aws/sg-open-to-world aws_security_group.web 38', // the second one
        'aws/provider-hard-coded-credentials provider.aws.leaky 9',
        'aws/iam-policy-full-admin data.aws_iam_policy_document.admin 85',
        'aws/iam-policy-wildcard-action aws_iam_role_policy.ops 93', // policy JSON in a heredoc
        'aws/policy-public-principal aws_s3_bucket_policy.open 103', // policy JSON in a string
        'aws/secret-in-user-data aws_instance.app 65',
        'aws/db-publicly-accessible aws_db_instance.orders 75',
        'aws/lambda-secret-in-environment aws_lambda_function.worker 141',
      ]),
    );
    // Below the heredoc the scan of the source is still in step with the blocks.
    expect(where(output)).toContain('aws/cloudtrail-not-multi-region aws_cloudtrail.main 147');
    expect(output.findings.find((entry) => entry.rule === 'aws/sg-admin-port-open-to-world')).toMatchObject({ severity: 'critical', cis: 'CIS AWS 1.2.0 4.1, 4.2', message: 'Ingress from 0.0.0.0/0 to port 22' });
    expect(output.findings.find((entry) => entry.rule === 'aws/s3-public-acl')).not.toHaveProperty('cis');
  });

  it('judges a Terraform module whole: a bucket hardened by its companion resources has no finding', async () => {
    const output = await scan({ path: 'code/iac/terraform/hardened' });
    expect(output).toMatchObject({ findings: [], files_scanned: 1, errors: [] });
  });

  it('covers Azure, Google Cloud, Alibaba Cloud and Oracle Cloud resources', async () => {
    const output = await scan({ path: 'code/iac/terraform', max_results: 1000 });
    expect(where(output)).toEqual(
      expect.arrayContaining([
        'azure/nsg-admin-port-open-to-world azurerm_network_security_group.open 44',
        'azure/storage-queue-logging-incomplete azurerm_storage_account.logs 12',
        'azure/storage-https-not-required azurerm_storage_account.logs 8',
        'azure/aks-rbac-disabled azurerm_kubernetes_cluster.main 89',
        'gcp/storage-bucket-public google_storage_bucket_iam_member.public 10',
        'gcp/firewall-admin-port-open-to-world google_compute_firewall.ssh 43',
        'gcp/sql-open-to-world google_sql_database_instance.main 32',
        'alicloud/db-open-to-world alicloud_db_instance.db 12',
        'oci/bucket-public oci_objectstorage_bucket.public 25',
      ]),
    );
    expect(output.findings.find((entry) => entry.rule === 'gcp/firewall-open-to-world')).toMatchObject({ object: 'google_compute_firewall.web', message: 'Ingress from 0.0.0.0/0 to 443' });
  });

  it('lists a Terraform file that is not HCL in errors and reads the rest of its module', async () => {
    mkdirSync(path.join(root, 'tf-broken'));
    writeFileSync(path.join(root, 'tf-broken/bad.tf'), 'resource "aws_s3_bucket" "x" {\n  acl = \n');
    writeFileSync(path.join(root, 'tf-broken/good.tf'), 'resource "aws_kms_key" "k" {\n  description = "k"\n}\n');
    const output = await scan({ path: 'tf-broken' });
    expect(output.errors).toEqual([{ file: 'tf-broken/bad.tf', message: expect.stringMatching(/^Not valid HCL: /) }]);
    expect(where(output)).toEqual(['aws/kms-key-rotation-disabled aws_kms_key.k 1']);
    expect(output.files_scanned).toBe(1);
  });

  it('reads CloudFormation in YAML with short-form tags and in JSON, with the AWS rules', async () => {
    const output = await scan({ path: 'code/iac/stacks/cloudformation', max_results: 1000 });
    expect(output).toMatchObject({ files_scanned: 2, errors: [] });
    expect(where(output)).toEqual(
      expect.arrayContaining([
        'aws/s3-public-acl Uploads (AWS::S3::Bucket) 11',
        'aws/s3-versioning-disabled Uploads (AWS::S3::Bucket) 13',
        'aws/ebs-unencrypted Logs (AWS::EC2::Volume) 20',
        'aws/sg-admin-port-open-to-world AdminSsh (AWS::EC2::SecurityGroup) 31',
        'aws/sg-no-description AdminSsh (AWS::EC2::SecurityGroup) 31', // the ingress rule has no Description
        'aws/kms-key-rotation-disabled Key (AWS::KMS::Key) 35',
        'aws/iam-policy-full-admin Admin (AWS::IAM::Policy) 44',
        'aws/db-publicly-accessible Orders (AWS::RDS::DBInstance) 11',
        'aws/db-storage-unencrypted Orders (AWS::RDS::DBInstance) 12',
        'aws/cloudtrail-not-multi-region Trail (AWS::CloudTrail::Trail) 16',
      ]),
    );
    // `Encrypted: !Ref Encrypt` is known only at deployment: neither passed nor failed.
    expect(output.findings.some((entry) => entry.object.startsWith('Scratch'))).toBe(false);
  });

  it('renders a Helm chart with its default values and runs the Kubernetes rules on it', async () => {
    const output = await scan({ path: 'code/iac/stacks/helm', max_results: 1000 });
    // service.yaml renders to nothing (service.enabled: false); NOTES.txt and _helpers.tpl are not manifests.
    expect(output).toMatchObject({ files_scanned: 1, errors: [] });
    const deployment = 'code/iac/stacks/helm/web/templates/deployment.yaml';
    // Lines are the template's: the line that wrote the field (here toYaml of the values, and a literal under an if).
    expect(output.findings.find((entry) => entry.rule === 'k8s/privileged-container')).toMatchObject({ file: deployment, line: 18, object: 'Deployment/release-name-web container web' });
    expect(output.findings.find((entry) => entry.rule === 'k8s/host-network')).toMatchObject({ file: deployment, line: 12 });
    // image tag "" falls back to the chart's appVersion through `default`.
    expect(output.findings.some((entry) => entry.rule === 'k8s/image-latest-or-untagged')).toBe(false);
  });

  it('lists a Helm template that does not render in errors, and stops runaway recursion', async () => {
    const chart = path.join(root, 'charts/loop');
    mkdirSync(path.join(chart, 'templates'), { recursive: true });
    writeFileSync(path.join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: loop\nversion: 0.1.0\n');
    writeFileSync(path.join(chart, 'templates/_helpers.tpl'), '{{- define "loop" -}}{{ include "loop" . }}{{- end -}}\n');
    writeFileSync(path.join(chart, 'templates/loop.yaml'), 'kind: ConfigMap\nname: {{ include "loop" . }}\n');
    writeFileSync(path.join(chart, 'templates/missing.yaml'), 'kind: ConfigMap\nname: {{ .Values.name | nosuchfunction }}\n');
    const output = await scan({ path: 'charts' });
    expect(output.errors).toEqual([
      { file: 'charts/loop/templates/loop.yaml', message: 'Template not rendered: include "loop" nested over 100 deep' },
      { file: 'charts/loop/templates/missing.yaml', message: 'Template not rendered: function "nosuchfunction" not defined' },
    ]);
  });

  it('reads Docker Compose services', async () => {
    const output = await scan({ path: 'code/iac/stacks/compose', max_results: 1000 });
    expect(output).toMatchObject({ files_scanned: 1, errors: [] });
    expect(where(output)).toEqual(
      expect.arrayContaining([
        'compose/privileged service agent 5',
        'compose/host-network service agent 6',
        'compose/host-pid-or-ipc service agent 7',
        'compose/docker-socket-mount service agent 9',
        'compose/host-system-mount service agent 10',
        'compose/secret-in-environment service api 19',
        'compose/image-latest-or-untagged service api 16',
        'compose/port-on-all-interfaces service api 23',
        'compose/host-pid-or-ipc service worker 28',
      ]),
    );
    // LOG_LEVEL is no secret; API_TOKEN comes from the shell; 127.0.0.1:9090 is local; worker is built and tagged.
    expect(where(output).filter((entry) => /secret-in-environment|port-on-all|image-latest/.test(entry))).toHaveLength(4);
  });

  it('flags RBAC bindings to cluster-admin, admin and edit, not to view', async () => {
    const output = await scan({ path: 'code/iac/stacks/rbac' });
    expect(output.findings.map((entry) => [entry.rule, entry.object, entry.line, entry.message])).toEqual([
      ['k8s/rbac-binding-to-privileged-role', 'ClusterRoleBinding/ci-deployer-admin', 8, 'Binds cluster-admin to ServiceAccount ci/deployer'],
      ['k8s/rbac-binding-to-privileged-role', 'RoleBinding/everyone-edits', 35, 'Binds edit to Group system:authenticated (a group that stands for every user or service account)'],
    ]);
  });

  it('fills what the file budget leaves with JSON files instead of refusing the tree', async () => {
    const tree = path.join(root, 'json-heavy');
    mkdirSync(tree);
    copyFileSync(path.join(root, 'code/iac/k8s/debug-pod.yaml'), path.join(tree, 'pod.yaml'));
    for (let index = 0; index < 2000; index += 1) writeFileSync(path.join(tree, `locale-${index}.json`), '{"hello": "world"}\n');
    const output = await scan({ path: 'json-heavy' });
    expect(output.errors).toEqual([{ file: 'json-heavy', message: 'Not scanned: 1 JSON files past the limit of 2000 files per call; narrow the path or list files' }]);
    expect(output).toMatchObject({ files_scanned: 1 });
  });

  it('stops when cancelled between files', async () => {
    const many = path.join(root, 'many');
    mkdirSync(many);
    for (let index = 0; index < 200; index += 1) copyFileSync(path.join(root, 'code/iac/k8s/insecure-deployment.yaml'), path.join(many, `app-${index}.yaml`));
    const controller = new AbortController();
    const progress: number[] = [];
    const running = scan({ path: 'many' }, controller.signal, () => {
      progress.push(1);
      if (progress.length === 2) controller.abort(new Error('cancelled'));
    });
    await expect(running).rejects.toThrow('cancelled');
    expect(progress.length).toBe(2);
  });
});
