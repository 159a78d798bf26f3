/** Terraform checks of AWS resources (hashicorp/aws 3.x–5.x attribute names). */
import { AWS_CREDENTIAL, AWS_RULES as R, SECRET_NAME } from './rules';
import { ADMIN_PORTS, blocksOf, check, isExpression, isFalse, isTrue, listOf, mustBeSet, mustBeTrue, mustNotBeTrue, rangeCovers, valueAt, WORLD, type Fault, type Json, type TfBlock, type TfCheck, type TfModule } from './terraform-model';
import { documentStatements, policyFaults, type Statement } from './aws-policy';

const PUBLIC_ACLS = new Set(['public-read', 'public-read-write', 'authenticated-read']);
const PASSWORD_ASSIGNMENT = /\b(?:passw(?:or)?d|secret|api[_-]?key|token)\w*\s*[=:]\s*['"]?[^\s'"$]{6,}/i;

/** A companion resource (aws_s3_bucket_versioning, aws_flow_log, …) that refers to `block` through `attribute`. */
const companion = (module: TfModule, type: string, attribute: string, block: TfBlock, accept: (body: Json) => boolean = () => true) =>
  module.referring(type, attribute, block).some((entry) => accept(entry.body));

function bucketChecks(): TfCheck[] {
  const bucket = ['aws_s3_bucket'];
  return [
    check(R.s3PublicAcl, ['aws_s3_bucket', 'aws_s3_bucket_acl'], ({ body }) => (typeof body.acl === 'string' && PUBLIC_ACLS.has(body.acl) ? { path: ['acl'], message: `acl = "${body.acl}"` } : undefined)),
    check(R.s3NoPublicAccessBlock, bucket, (block, module) => {
      if (companion(module, 'aws_s3_bucket_public_access_block', 'bucket', block)) return undefined;
      return { path: [], message: 'No aws_s3_bucket_public_access_block refers to this bucket' };
    }),
    check(R.s3NoPublicAccessBlock, ['aws_s3_bucket_public_access_block'], ({ body }) => {
      const open = ['block_public_acls', 'block_public_policy', 'ignore_public_acls', 'restrict_public_buckets'].filter((field) => !isTrue(body[field]) && !isExpression(body[field]));
      return open.length === 0 ? undefined : { path: [open[0]], message: `${open.join(', ')} not true` };
    }),
    check(R.s3Unencrypted, bucket, (block, module) =>
      valueAt(block.body, ['server_side_encryption_configuration']) !== undefined || companion(module, 'aws_s3_bucket_server_side_encryption_configuration', 'bucket', block)
        ? undefined
        : { path: [], message: 'No server_side_encryption_configuration (inline or aws_s3_bucket_server_side_encryption_configuration)' }),
    check(R.s3Versioning, bucket, (block, module) => {
      const inline = valueAt(block.body, ['versioning', 'enabled']);
      if (isTrue(inline) || isExpression(inline)) return undefined;
      const enabled = (body: Json) => {
        const status = valueAt(body, ['versioning_configuration', 'status']);
        return status === 'Enabled' || isExpression(status);
      };
      if (companion(module, 'aws_s3_bucket_versioning', 'bucket', block, enabled)) return undefined;
      return { path: inline === undefined ? [] : ['versioning', 'enabled'], message: inline === undefined ? 'No versioning (inline or aws_s3_bucket_versioning)' : `versioning.enabled = ${String(inline)}` };
    }),
    check(R.s3Logging, bucket, (block, module) =>
      valueAt(block.body, ['logging']) !== undefined || companion(module, 'aws_s3_bucket_logging', 'bucket', block) || /log/i.test(String(block.body.acl ?? ''))
        ? undefined
        : { path: [], message: 'No logging (inline or aws_s3_bucket_logging)' }),
    check(R.s3ObjectKms, ['aws_s3_bucket_object', 'aws_s3_object'], mustBeSet(['kms_key_id'], 'kms_key_id is not set: the object is not encrypted with a customer managed key')),
  ];
}

/** Ingress rules of a security group in one shape: inline blocks, aws_security_group_rule, aws_vpc_security_group_ingress_rule. */
function ingressRules(block: TfBlock): Array<{ path: Fault['path']; from: unknown; to: unknown; protocol: unknown; sources: unknown[] }> {
  const { body } = block;
  if (block.type === 'aws_security_group') {
    return blocksOf(body, 'ingress').map(([rule, index]) => ({ path: ['ingress', index], from: rule.from_port, to: rule.to_port, protocol: rule.protocol, sources: [...listOf(rule.cidr_blocks), ...listOf(rule.ipv6_cidr_blocks)] }));
  }
  if (block.type === 'aws_security_group_rule') {
    return body.type === 'ingress' ? [{ path: [], from: body.from_port, to: body.to_port, protocol: body.protocol, sources: [...listOf(body.cidr_blocks), ...listOf(body.ipv6_cidr_blocks)] }] : [];
  }
  return [{ path: [], from: body.from_port, to: body.to_port, protocol: body.ip_protocol, sources: [body.cidr_ipv4, body.cidr_ipv6] }];
}

function securityGroupChecks(): TfCheck[] {
  const types = ['aws_security_group', 'aws_security_group_rule', 'aws_vpc_security_group_ingress_rule'];
  const open = (block: TfBlock) => ingressRules(block).filter((rule) => rule.sources.some((source) => WORLD.has(String(source))));
  const allPorts = (rule: { protocol: unknown; from: unknown; to: unknown }) => String(rule.protocol) === '-1' || String(rule.protocol) === 'all' || (rule.from === undefined && rule.to === undefined);
  const admin = (rule: { protocol: unknown; from: unknown; to: unknown }) => allPorts(rule) || ADMIN_PORTS.some((port) => rangeCovers(rule.from, rule.to, port));
  const ports = (rule: { protocol: unknown; from: unknown; to: unknown }) => (allPorts(rule) ? 'all ports' : rule.from === rule.to ? `port ${String(rule.from)}` : `ports ${String(rule.from)}-${String(rule.to)}`);
  return [
    check(R.sgAdminOpen, types, (block) => open(block).filter(admin).map((rule) => ({ path: rule.path, message: `Ingress from ${rule.sources.filter((source) => WORLD.has(String(source))).join(', ')} to ${ports(rule)}` }))),
    check(R.sgOpen, types, (block) => open(block).filter((rule) => !admin(rule)).map((rule) => ({ path: rule.path, message: `Ingress from ${rule.sources.filter((source) => WORLD.has(String(source))).join(', ')} to ${ports(rule)}` }))),
    check(R.sgDescription, ['aws_security_group', 'aws_security_group_rule'], ({ type, body }) => {
      if (type === 'aws_security_group_rule') return body.description === undefined ? { path: [], message: 'The rule has no description' } : undefined;
      if (body.description === undefined) return { path: [], message: 'The security group has no description (Terraform sets "Managed by Terraform")' };
      const bare = [...blocksOf(body, 'ingress').map(([rule, index]) => ['ingress', index, rule] as const), ...blocksOf(body, 'egress').map(([rule, index]) => ['egress', index, rule] as const)].find(([, , rule]) => rule.description === undefined);
      return bare ? { path: [bare[0], bare[1]], message: `An ${bare[0]} rule has no description` } : undefined;
    }),
  ];
}

function computeChecks(): TfCheck[] {
  const userData = (body: Json) => [body.user_data, body.user_data_base64].find((value) => typeof value === 'string');
  return [
    check(R.ebsUnencrypted, ['aws_ebs_volume'], mustBeTrue(['encrypted'], 'the volume is stored unencrypted')),
    check(R.instanceDiskUnencrypted, ['aws_instance', 'aws_launch_configuration'], mustBeTrue(['root_block_device', 'encrypted'], 'the root volume is unencrypted unless the account encrypts EBS by default')),
    check(R.imdsV1, ['aws_instance', 'aws_launch_template', 'aws_launch_configuration'], ({ body }) => {
      const tokens = valueAt(body, ['metadata_options', 'http_tokens']);
      return tokens === 'required' || isExpression(tokens) || valueAt(body, ['metadata_options', 'http_endpoint']) === 'disabled' ? undefined : { path: ['metadata_options', 'http_tokens'], message: tokens === undefined ? 'metadata_options.http_tokens is not "required"' : `http_tokens = "${String(tokens)}"` };
    }),
    check(R.userDataSecret, ['aws_instance', 'aws_launch_configuration', 'aws_launch_template'], ({ body }) => {
      const text = userData(body);
      return text && (AWS_CREDENTIAL.test(text) || PASSWORD_ASSIGNMENT.test(text)) ? { path: [body.user_data === undefined ? 'user_data_base64' : 'user_data'], message: 'user_data holds what looks like a credential' } : undefined;
    }),
    check(R.subnetPublicIp, ['aws_subnet'], mustNotBeTrue(['map_public_ip_on_launch'], 'every instance launched here is reachable from the internet if routed')),
    check(R.vpcFlowLogs, ['aws_vpc'], (block, module) => (companion(module, 'aws_flow_log', 'vpc_id', block) ? undefined : { path: [], message: 'No aws_flow_log refers to this VPC' })),
    check(R.vpcDefaultSg, ['aws_vpc'], (block, module) =>
      companion(module, 'aws_default_security_group', 'vpc_id', block, (body) => body.ingress === undefined && body.egress === undefined)
        ? undefined
        : { path: [], message: 'No aws_default_security_group without rules refers to this VPC: its default group allows traffic between members and all egress' }),
    check(R.ecrMutable, ['aws_ecr_repository'], ({ body }) => (body.image_tag_mutability === 'IMMUTABLE' || isExpression(body.image_tag_mutability) ? undefined : { path: ['image_tag_mutability'], message: `image_tag_mutability = ${String(body.image_tag_mutability ?? 'MUTABLE (default)')}` })),
    check(R.ecrScan, ['aws_ecr_repository'], mustBeTrue(['image_scanning_configuration', 'scan_on_push'], 'pushed images are not scanned')),
    check(R.lambdaSecret, ['aws_lambda_function'], ({ body }) => {
      const variables = valueAt(body, ['environment', 'variables']);
      if (!variables || typeof variables !== 'object') return undefined;
      const secret = Object.entries(variables as Json).find(([name, value]) => typeof value === 'string' && !isExpression(value) && value !== '' && (SECRET_NAME.test(name) || AWS_CREDENTIAL.test(value)));
      return secret ? { path: ['environment', 'variables'], message: `${secret[0]} is set to a literal value` } : undefined;
    }),
    check(R.lambdaTracing, ['aws_lambda_function'], ({ body }) => (valueAt(body, ['tracing_config', 'mode']) === 'Active' ? undefined : { path: ['tracing_config'], message: 'tracing_config.mode is not "Active"' })),
  ];
}

function databaseChecks(): TfCheck[] {
  const clusters = ['aws_db_instance', 'aws_rds_cluster', 'aws_neptune_cluster', 'aws_docdb_cluster'];
  return [
    check(R.dbUnencrypted, clusters, (block) => (block.type === 'aws_rds_cluster' && block.body.engine_mode === 'serverless' ? undefined : mustBeTrue(['storage_encrypted'], 'data, backups and snapshots are stored unencrypted')(block))),
    check(R.dbPublic, ['aws_db_instance', 'aws_rds_cluster_instance'], mustNotBeTrue(['publicly_accessible'], 'the database gets a public address')),
    check(R.dbIamAuth, ['aws_db_instance', 'aws_rds_cluster', 'aws_neptune_cluster'], mustBeTrue(['iam_database_authentication_enabled'], 'only static passwords authenticate')),
    check(R.dbDeletionProtection, ['aws_db_instance', 'aws_rds_cluster', 'aws_neptune_cluster', 'aws_docdb_cluster'], mustBeTrue(['deletion_protection'], 'a terraform destroy or a mistaken call deletes the database')),
    check(R.dbBackups, ['aws_db_instance', 'aws_rds_cluster'], ({ body }) => (Number(body.backup_retention_period) === 0 && body.backup_retention_period !== undefined && body.backup_retention_period !== '' ? { path: ['backup_retention_period'], message: 'backup_retention_period = 0' } : undefined)),
    check(R.dbLogs, ['aws_db_instance', 'aws_rds_cluster', 'aws_neptune_cluster', 'aws_docdb_cluster'], mustBeSet(['enabled_cloudwatch_logs_exports'], 'enabled_cloudwatch_logs_exports is not set: database logs stay on the instance')),
    check(R.searchUnencrypted, ['aws_elasticsearch_domain', 'aws_opensearch_domain'], mustBeTrue(['encrypt_at_rest', 'enabled'], 'indices and snapshots are stored unencrypted')),
    check(R.searchOutsideVpc, ['aws_elasticsearch_domain', 'aws_opensearch_domain'], mustBeSet(['vpc_options'], 'No vpc_options: the domain has a public endpoint')),
  ];
}

function platformChecks(): TfCheck[] {
  return [
    check(R.kmsRotation, ['aws_kms_key'], (block) => {
      const spec = block.body.customer_master_key_spec;
      // Only symmetric keys can rotate automatically.
      return spec !== undefined && spec !== 'SYMMETRIC_DEFAULT' ? undefined : mustBeTrue(['enable_key_rotation'], 'the key material is never rotated')(block);
    }),
    check(R.providerKeys, ['aws'], ({ kind, body }) => {
      const literal = ['access_key', 'secret_key'].filter((field) => typeof body[field] === 'string' && !isExpression(body[field]) && body[field] !== '');
      return kind === 'provider' && literal.length > 0 ? { path: [literal[0]], message: `${literal.join(' and ')} written in the configuration` } : undefined;
    }),
    check(R.eksPublic, ['aws_eks_cluster'], ({ body }) => {
      if (isFalse(valueAt(body, ['vpc_config', 'endpoint_public_access']))) return undefined;
      const cidrs = listOf(valueAt(body, ['vpc_config', 'public_access_cidrs']));
      return cidrs.length === 0 || cidrs.some((cidr) => WORLD.has(String(cidr))) ? { path: ['vpc_config'], message: 'The public endpoint is on and open to 0.0.0.0/0' } : undefined;
    }),
    check(R.eksSecrets, ['aws_eks_cluster'], mustBeSet(['encryption_config'], 'No encryption_config: secrets are stored without envelope encryption')),
    check(R.eksLogging, ['aws_eks_cluster'], ({ body }) => {
      const types = listOf(body.enabled_cluster_log_types).map(String);
      if (isExpression(body.enabled_cluster_log_types)) return undefined;
      const missing = ['api', 'audit', 'authenticator', 'controllerManager', 'scheduler'].filter((type) => !types.includes(type));
      return missing.length === 0 ? undefined : { path: ['enabled_cluster_log_types'], message: `Not logged: ${missing.join(', ')}` };
    }),
    check(R.lbLogs, ['aws_elb', 'aws_lb', 'aws_alb'], ({ body }) => {
      const logs = valueAt(body, ['access_logs']);
      const enabled = valueAt(body, ['access_logs', 'enabled']);
      return logs !== undefined && !isFalse(enabled) ? undefined : { path: ['access_logs'], message: 'No access_logs (or enabled = false)' };
    }),
    check(R.lbHttp, ['aws_elb', 'aws_lb_listener', 'aws_alb_listener'], ({ type, body }) => {
      if (type === 'aws_elb') {
        const plain = blocksOf(body, 'listener').find(([listener]) => String(listener.lb_protocol).toLowerCase() === 'http');
        return plain ? { path: ['listener', plain[1], 'lb_protocol'], message: `Listener on port ${String(plain[0].lb_port)} speaks HTTP` } : undefined;
      }
      const redirects = blocksOf(body, 'default_action').some(([action]) => action.type === 'redirect');
      return body.protocol === 'HTTP' && !redirects ? { path: ['protocol'], message: 'protocol = "HTTP" without a redirect to HTTPS' } : undefined;
    }),
    check(R.trailMultiRegion, ['aws_cloudtrail'], mustBeTrue(['is_multi_region_trail'], 'activity in other regions is not recorded')),
    check(R.trailValidation, ['aws_cloudtrail'], mustBeTrue(['enable_log_file_validation'], 'tampering with log files goes unnoticed')),
    check(R.trailKms, ['aws_cloudtrail'], mustBeSet(['kms_key_id'], 'kms_key_id is not set: logs are encrypted with S3-managed keys only')),
    check(R.iamAdmin, POLICY_HOLDERS, (block) => policyFaults(statementsOf(block)).filter((fault) => fault.admin)),
    check(R.iamWildcard, POLICY_HOLDERS, (block) => policyFaults(statementsOf(block)).filter((fault) => fault.wildcard && !fault.admin)),
    check(R.policyPublicPrincipal, POLICY_HOLDERS, (block) => policyFaults(statementsOf(block)).filter((fault) => fault.publicPrincipal)),
  ];
}

/**
 * The statements of aws_iam_policy_document blocks, or of policy JSON written literally
 * (heredoc or string) in `policy` / `access_policies`; jsonencode(…) and templates are
 * expressions and are not read.
 */
function statementsOf(block: TfBlock): Statement[] {
  if (block.type === 'aws_iam_policy_document') {
    return blocksOf(block.body, 'statement').map(([statement, index]) => ({
      path: ['statement', index, 'actions'],
      allow: (statement.effect ?? 'Allow') === 'Allow',
      actions: listOf(statement.actions).map(String),
      resources: listOf(statement.resources).map(String),
      principals: blocksOf(statement, 'principals').flatMap(([principal]) => listOf(principal.identifiers).map(String)),
      conditioned: statement.condition !== undefined,
    }));
  }
  const field = ['policy', 'access_policies'].find((name) => typeof block.body[name] === 'string');
  const text = field ? (block.body[field] as string).trim() : '';
  if (!field || !text.startsWith('{')) return [];
  try {
    return documentStatements(JSON.parse(text), () => [field]);
  } catch {
    return [];
  }
}

/** Resources and data sources that hold an IAM or resource policy. */
const POLICY_HOLDERS = ['aws_iam_policy_document', 'aws_iam_policy', 'aws_iam_role_policy', 'aws_iam_user_policy', 'aws_iam_group_policy', 'aws_s3_bucket_policy', 'aws_sqs_queue_policy', 'aws_sns_topic_policy', 'aws_elasticsearch_domain_policy', 'aws_opensearch_domain_policy', 'aws_ecr_repository_policy', 'aws_kms_key'];

export const AWS_CHECKS: readonly TfCheck[] = [...bucketChecks(), ...securityGroupChecks(), ...computeChecks(), ...databaseChecks(), ...platformChecks()];
