/**
 * CloudFormation templates, YAML (with the short-form intrinsic tags `!Ref`, `!Sub`, `!GetAtt`, …
 * read as their `Fn::` forms) or JSON: the AWS rules that Terraform's AWS resources get, on the
 * same resource kinds. A property set by an intrinsic function (a parameter, a condition) is
 * unknown here and neither passes nor fails a check.
 */
import { isScalar, Pair, Scalar, visit, YAMLMap, type Document } from 'yaml';
import { documentStatements, policyFaults, type Statement } from './aws-policy';
import { AWS_CREDENTIAL, AWS_RULES as R, finding, SECRET_NAME, type IacFinding, type IacRule } from './rules';
import { arrayOf, isObject, parseYamlFile, valueAt, type Json, type Path, type YamlDocument } from './yaml-documents';

/** Short-form tags and the long form each stands for. */
const INTRINSIC_TAGS: Readonly<Record<string, string>> = Object.fromEntries(
  ['Base64', 'Cidr', 'FindInMap', 'GetAtt', 'GetAZs', 'ImportValue', 'Join', 'Select', 'Split', 'Sub', 'Transform', 'And', 'Equals', 'If', 'Not', 'Or', 'Length', 'ToJsonString'].map((name) => [`!${name}`, `Fn::${name}`]).concat([['!Ref', 'Ref'], ['!Condition', 'Condition']]),
);

export interface TemplateScan {
  /** False when the file is not a CloudFormation template. */
  cloudformation: boolean;
  findings: IacFinding[];
  errors: string[];
}

/** Whether text looks like a template before it is parsed (cheap: most YAML and JSON files are not). */
export function mayBeCloudFormation(text: string): boolean {
  return /^\s*"?AWSTemplateFormatVersion"?\s*:/m.test(text) || (/^\s*"?Resources"?\s*:/m.test(text) && /AWS::\w+::\w+/.test(text));
}

export function scanTemplate(file: string, text: string): TemplateScan {
  const parsed = parseYamlFile(text, toLongForm);
  const result: TemplateScan = { cloudformation: false, findings: [], errors: parsed.errors };
  for (const document of parsed.documents) {
    const resources = isObject(document.root) ? document.root.Resources : undefined;
    if (!isObject(resources) || !Object.values(resources).some((resource) => isObject(resource) && typeof resource.Type === 'string' && resource.Type.startsWith('AWS::'))) continue;
    result.cloudformation = true;
    for (const [logicalId, resource] of Object.entries(resources)) {
      if (!isObject(resource) || typeof resource.Type !== 'string') continue;
      const properties = isObject(resource.Properties) ? resource.Properties : {};
      const at = (path: Path, found: IacRule, message: string) =>
        result.findings.push(finding(found, { file, line: document.lineAt(['Resources', logicalId, ...(path.length > 0 ? ['Properties', ...path] : [])]), object: `${logicalId} (${resource.Type})` }, message));
      CHECKS[resource.Type]?.(properties, at, document);
    }
  }
  return result;
}

/** Replaces each `!Tag value` node by the map `{ Fn::Tag: value }` it abbreviates. */
function toLongForm(document: Document): void {
  visit(document, {
    Node(_key, node) {
      const name = node.tag === undefined ? undefined : INTRINSIC_TAGS[node.tag];
      if (name === undefined) return undefined;
      node.tag = undefined;
      const wrapper = new YAMLMap();
      wrapper.range = node.range;
      // `!GetAtt Bucket.Arn` is the scalar form of `Fn::GetAtt: [Bucket, Arn]`.
      const value = name === 'Fn::GetAtt' && isScalar(node) && typeof node.value === 'string' ? document.createNode(node.value.split('.')) : node;
      wrapper.items.push(new Pair(new Scalar(name), value));
      return wrapper;
    },
  });
}

type At = (path: Path, rule: IacRule, message: string) => void;

/** A value set through an intrinsic function (`{ Ref: … }`, `{ Fn::If: … }`): unknown until deployment. */
const isIntrinsic = (value: unknown) => isObject(value) && Object.keys(value).length === 1 && /^(?:Ref|Fn::\w+|Condition)$/.test(Object.keys(value)[0]);
const isTrue = (value: unknown) => value === true || value === 'true';
const known = (value: unknown) => !isIntrinsic(value);

function mustBeTrue(properties: Json, path: Path, at: At, found: IacRule, message: string): void {
  const value = valueAt(properties, path);
  if (isTrue(value) || !known(value)) return;
  at(value === undefined ? path.slice(0, -1) : path, found, `${path.join('.')} ${value === undefined ? 'is not set' : `is ${String(value)}`}; ${message}`);
}

const WORLD = new Set(['0.0.0.0/0', '::/0']);
const ADMIN_PORTS = [22, 3389];

function ingress(rule: Json, path: Path, at: At): void {
  const source = [rule.CidrIp, rule.CidrIpv6].find((cidr) => typeof cidr === 'string' && WORLD.has(cidr));
  if (source === undefined) return;
  const protocol = String(rule.IpProtocol ?? '');
  const from = Number(rule.FromPort);
  const to = Number(rule.ToPort ?? rule.FromPort);
  const all = protocol === '-1' || (from === 0 && to === 65535) || from === -1;
  const admin = all || ADMIN_PORTS.some((port) => from <= port && port <= to);
  at(path, admin ? R.sgAdminOpen : R.sgOpen, `Ingress from ${String(source)} to ${all ? 'all ports' : from === to ? `port ${from}` : `ports ${from}-${to}`}`);
}

function policies(statements: Statement[], at: At): void {
  for (const fault of policyFaults(statements)) {
    if (fault.admin) at(fault.path, R.iamAdmin, fault.message);
    else if (fault.wildcard) at(fault.path, R.iamWildcard, fault.message);
    if (fault.publicPrincipal) at(fault.path, R.policyPublicPrincipal, fault.message);
  }
}

const PUBLIC_ACLS = new Set(['PublicRead', 'PublicReadWrite', 'AuthenticatedRead']);

const CHECKS: Readonly<Record<string, (properties: Json, at: At, document: YamlDocument) => void>> = {
  'AWS::S3::Bucket': (properties, at) => {
    if (typeof properties.AccessControl === 'string' && PUBLIC_ACLS.has(properties.AccessControl)) at(['AccessControl'], R.s3PublicAcl, `AccessControl: ${properties.AccessControl}`);
    const block = properties.PublicAccessBlockConfiguration;
    const open = ['BlockPublicAcls', 'BlockPublicPolicy', 'IgnorePublicAcls', 'RestrictPublicBuckets'].filter((field) => isObject(block) && !isTrue(block[field]) && known(block[field]));
    if (!isObject(block) && known(block)) at([], R.s3NoPublicAccessBlock, 'No PublicAccessBlockConfiguration');
    else if (open.length > 0) at(['PublicAccessBlockConfiguration'], R.s3NoPublicAccessBlock, `${open.join(', ')} not true`);
    if (properties.BucketEncryption === undefined) at([], R.s3Unencrypted, 'No BucketEncryption');
    const status = valueAt(properties, ['VersioningConfiguration', 'Status']);
    if (status !== 'Enabled' && known(status)) at(status === undefined ? [] : ['VersioningConfiguration', 'Status'], R.s3Versioning, `VersioningConfiguration.Status ${status === undefined ? 'is not set' : `is ${String(status)}`}`);
    if (properties.LoggingConfiguration === undefined) at([], R.s3Logging, 'No LoggingConfiguration');
  },
  'AWS::EC2::SecurityGroup': (properties, at) => {
    for (const [index, rule] of arrayOf(properties.SecurityGroupIngress).entries()) if (isObject(rule)) ingress(rule, ['SecurityGroupIngress', index], at);
    for (const field of ['SecurityGroupIngress', 'SecurityGroupEgress']) {
      const bare = arrayOf(properties[field]).findIndex((rule) => isObject(rule) && rule.Description === undefined);
      if (bare !== -1) at([field, bare], R.sgDescription, `An ${field === 'SecurityGroupIngress' ? 'ingress' : 'egress'} rule has no Description`);
    }
  },
  'AWS::EC2::SecurityGroupIngress': (properties, at) => {
    ingress(properties, [], at);
    if (properties.Description === undefined) at([], R.sgDescription, 'The rule has no Description');
  },
  'AWS::EC2::SecurityGroupEgress': (properties, at) => {
    if (properties.Description === undefined) at([], R.sgDescription, 'The rule has no Description');
  },
  'AWS::EC2::Volume': (properties, at) => mustBeTrue(properties, ['Encrypted'], at, R.ebsUnencrypted, 'the volume is stored unencrypted'),
  'AWS::EC2::Instance': (properties, at) => {
    for (const [index, mapping] of arrayOf(properties.BlockDeviceMappings).entries()) {
      if (isObject(mapping) && isObject(mapping.Ebs)) mustBeTrue(properties, ['BlockDeviceMappings', index, 'Ebs', 'Encrypted'], at, R.instanceDiskUnencrypted, 'the volume is unencrypted unless the account encrypts EBS by default');
    }
    if (properties.UserData !== undefined && AWS_CREDENTIAL.test(JSON.stringify(properties.UserData))) at(['UserData'], R.userDataSecret, 'UserData holds what looks like an AWS access key');
  },
  'AWS::EC2::Subnet': (properties, at) => {
    if (isTrue(properties.MapPublicIpOnLaunch)) at(['MapPublicIpOnLaunch'], R.subnetPublicIp, 'MapPublicIpOnLaunch: true');
  },
  'AWS::RDS::DBInstance': (properties, at) => {
    // An instance of an Aurora cluster takes encryption from its cluster.
    if (properties.DBClusterIdentifier === undefined) mustBeTrue(properties, ['StorageEncrypted'], at, R.dbUnencrypted, 'data, backups and snapshots are stored unencrypted');
    if (isTrue(properties.PubliclyAccessible)) at(['PubliclyAccessible'], R.dbPublic, 'PubliclyAccessible: true');
    if (properties.BackupRetentionPeriod !== undefined && Number(properties.BackupRetentionPeriod) === 0) at(['BackupRetentionPeriod'], R.dbBackups, 'BackupRetentionPeriod: 0');
  },
  'AWS::RDS::DBCluster': (properties, at) => {
    if (properties.EngineMode !== 'serverless') mustBeTrue(properties, ['StorageEncrypted'], at, R.dbUnencrypted, 'data, backups and snapshots are stored unencrypted');
    mustBeTrue(properties, ['DeletionProtection'], at, R.dbDeletionProtection, 'a stack deletion or a mistaken call deletes the database');
  },
  'AWS::Neptune::DBCluster': (properties, at) => mustBeTrue(properties, ['StorageEncrypted'], at, R.dbUnencrypted, 'data is stored unencrypted'),
  'AWS::DocDB::DBCluster': (properties, at) => mustBeTrue(properties, ['StorageEncrypted'], at, R.dbUnencrypted, 'data is stored unencrypted'),
  'AWS::KMS::Key': (properties, at) => {
    if (properties.KeySpec === undefined || properties.KeySpec === 'SYMMETRIC_DEFAULT') mustBeTrue(properties, ['EnableKeyRotation'], at, R.kmsRotation, 'the key material is never rotated');
  },
  'AWS::IAM::Policy': (properties, at) => policies(documentStatements(properties.PolicyDocument, () => ['PolicyDocument']), at),
  'AWS::IAM::ManagedPolicy': (properties, at) => policies(documentStatements(properties.PolicyDocument, () => ['PolicyDocument']), at),
  'AWS::IAM::Role': (properties, at) => inlinePolicies(properties, at),
  'AWS::IAM::User': (properties, at) => inlinePolicies(properties, at),
  'AWS::IAM::Group': (properties, at) => inlinePolicies(properties, at),
  'AWS::S3::BucketPolicy': (properties, at) => policies(documentStatements(properties.PolicyDocument, () => ['PolicyDocument']), at),
  'AWS::SQS::QueuePolicy': (properties, at) => policies(documentStatements(properties.PolicyDocument, () => ['PolicyDocument']), at),
  'AWS::SNS::TopicPolicy': (properties, at) => policies(documentStatements(properties.PolicyDocument, () => ['PolicyDocument']), at),
  'AWS::CloudTrail::Trail': (properties, at) => {
    mustBeTrue(properties, ['IsMultiRegionTrail'], at, R.trailMultiRegion, 'activity in other regions is not recorded');
    mustBeTrue(properties, ['EnableLogFileValidation'], at, R.trailValidation, 'tampering with log files goes unnoticed');
    if (properties.KMSKeyId === undefined) at([], R.trailKms, 'No KMSKeyId');
  },
  'AWS::Lambda::Function': (properties, at) => {
    const variables = valueAt(properties, ['Environment', 'Variables']);
    for (const [name, value] of Object.entries(isObject(variables) ? variables : {})) {
      if (typeof value === 'string' && value !== '' && (SECRET_NAME.test(name) || AWS_CREDENTIAL.test(value))) at(['Environment', 'Variables', name], R.lambdaSecret, `${name} is set to a literal value`);
    }
    if (valueAt(properties, ['TracingConfig', 'Mode']) !== 'Active' && known(valueAt(properties, ['TracingConfig', 'Mode']))) at(['TracingConfig'], R.lambdaTracing, 'TracingConfig.Mode is not Active');
  },
  'AWS::ECR::Repository': (properties, at) => {
    if (properties.ImageTagMutability !== 'IMMUTABLE' && known(properties.ImageTagMutability)) at(['ImageTagMutability'], R.ecrMutable, `ImageTagMutability: ${String(properties.ImageTagMutability ?? 'MUTABLE (default)')}`);
    mustBeTrue(properties, ['ImageScanningConfiguration', 'ScanOnPush'], at, R.ecrScan, 'pushed images are not scanned');
  },
  'AWS::Elasticsearch::Domain': (properties, at) => mustBeTrue(properties, ['EncryptionAtRestOptions', 'Enabled'], at, R.searchUnencrypted, 'indices and snapshots are stored unencrypted'),
  'AWS::OpenSearchService::Domain': (properties, at) => mustBeTrue(properties, ['EncryptionAtRestOptions', 'Enabled'], at, R.searchUnencrypted, 'indices and snapshots are stored unencrypted'),
  'AWS::EKS::Cluster': (properties, at) => {
    if (properties.EncryptionConfig === undefined) at([], R.eksSecrets, 'No EncryptionConfig: secrets are stored without envelope encryption');
    const config = isObject(properties.ResourcesVpcConfig) ? properties.ResourcesVpcConfig : {};
    const cidrs = arrayOf(config.PublicAccessCidrs).map(String);
    if (config.EndpointPublicAccess !== false && known(config.EndpointPublicAccess) && (cidrs.length === 0 || cidrs.some((cidr) => WORLD.has(cidr)))) at(['ResourcesVpcConfig'], R.eksPublic, 'The public endpoint is on and open to 0.0.0.0/0');
  },
};

function inlinePolicies(properties: Json, at: At): void {
  for (const [index, policy] of arrayOf(properties.Policies).entries()) {
    if (isObject(policy)) policies(documentStatements(policy.PolicyDocument, () => ['Policies', index, 'PolicyDocument']), at);
  }
}
