/** Terraform checks of Alibaba Cloud (aliyun/alicloud) and Oracle Cloud (oracle/oci) resources. */
import { OTHER_CLOUD_RULES as R } from './rules';
import { check, isExpression, listOf, mustBeSet, valueAt, WORLD, type TfCheck } from './terraform-model';

export const OTHER_CLOUD_CHECKS: readonly TfCheck[] = [
  check(R.ossPublic, ['alicloud_oss_bucket', 'alicloud_oss_bucket_acl'], ({ body }) => (body.acl === 'public-read' || body.acl === 'public-read-write' ? { path: ['acl'], message: `acl = "${String(body.acl)}"` } : undefined)),
  check(R.ossVersioning, ['alicloud_oss_bucket'], ({ body }) => (valueAt(body, ['versioning', 'status']) === 'Enabled' ? undefined : { path: ['versioning'], message: 'versioning.status is not "Enabled"' })),
  check(R.ossLogging, ['alicloud_oss_bucket'], mustBeSet(['logging'], 'No logging block')),
  check(R.ossEncryption, ['alicloud_oss_bucket'], mustBeSet(['server_side_encryption_rule'], 'No server_side_encryption_rule')),
  check(R.aliDbOpen, ['alicloud_db_instance'], ({ body }) => {
    const open = listOf(body.security_ips).map(String).filter((address) => WORLD.has(address));
    return open.length > 0 ? { path: ['security_ips'], message: `security_ips includes ${open.join(', ')}` } : undefined;
  }),
  check(R.aliDbSsl, ['alicloud_db_instance'], ({ body }) => (body.ssl_action === 'Open' || isExpression(body.ssl_action) ? undefined : { path: ['ssl_action'], message: `ssl_action ${body.ssl_action === undefined ? 'is not set' : `= "${String(body.ssl_action)}"`}` })),
  check(R.aliTrail, ['alicloud_actiontrail_trail'], ({ body }) => {
    const partial = [['event_rw', body.event_rw ?? 'Write'], ['trail_region', body.trail_region ?? 'All']].filter(([, value]) => value !== 'All' && !isExpression(value));
    return partial.length > 0 ? { path: [partial[0][0] as string], message: partial.map(([field, value]) => `${String(field)} = "${String(value)}"`).join(', ') } : undefined;
  }),
  check(R.ociPublic, ['oci_objectstorage_bucket'], ({ body }) => (body.access_type === 'ObjectRead' || body.access_type === 'ObjectReadWithoutList' ? { path: ['access_type'], message: `access_type = "${String(body.access_type)}"` } : undefined)),
  check(R.ociVersioning, ['oci_objectstorage_bucket'], ({ body }) => (body.versioning === 'Enabled' || isExpression(body.versioning) ? undefined : { path: ['versioning'], message: `versioning ${body.versioning === undefined ? 'is not set' : `= "${String(body.versioning)}"`}` })),
  check(R.ociKms, ['oci_objectstorage_bucket'], mustBeSet(['kms_key_id'], 'No kms_key_id: encrypted with Oracle-managed keys only')),
];
