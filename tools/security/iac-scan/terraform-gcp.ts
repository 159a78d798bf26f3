/** Terraform checks of Google Cloud resources (hashicorp/google 3.x–6.x attribute names). */
import { GCP_RULES as R } from './rules';
import { ADMIN_PORTS, blocksOf, check, isExpression, isFalse, isTrue, listOf, mustBeSet, mustBeTrue, mustNotBeTrue, portSpecCovers, valueAt, WORLD, type Json, type TfCheck } from './terraform-model';

const PUBLIC_MEMBERS = new Set(['allUsers', 'allAuthenticatedUsers']);
const metadataValue = (body: Json, key: string) => valueAt(body, ['metadata', key]);

function storageChecks(): TfCheck[] {
  return [
    check(R.bucketPublic, ['google_storage_bucket_iam_binding', 'google_storage_bucket_iam_member', 'google_storage_bucket_access_control', 'google_storage_default_object_access_control'], ({ body }) => {
      const [field, members] = body.members !== undefined ? ['members', listOf(body.members)] : body.member !== undefined ? ['member', [body.member]] : ['entity', [body.entity]];
      const open = members.map(String).filter((member) => PUBLIC_MEMBERS.has(member));
      return open.length > 0 ? { path: [field], message: `${open.join(', ')} granted ${String(body.role ?? '')}`.trim() } : undefined;
    }),
    check(R.bucketUniform, ['google_storage_bucket'], mustBeTrue(['uniform_bucket_level_access'], 'object ACLs can make single objects public')),
    check(R.bucketVersioning, ['google_storage_bucket'], mustBeTrue(['versioning', 'enabled'], 'overwritten or deleted objects cannot be recovered')),
    check(R.bucketLogging, ['google_storage_bucket'], mustBeSet(['logging'], 'No logging block')),
    check(R.datasetPublic, ['google_bigquery_dataset', 'google_bigquery_dataset_access', 'google_bigquery_dataset_iam_member', 'google_bigquery_dataset_iam_binding'], ({ type, body }) => {
      if (type === 'google_bigquery_dataset') {
        const open = blocksOf(body, 'access').find(([entry]) => PUBLIC_MEMBERS.has(String(entry.special_group)) || PUBLIC_MEMBERS.has(String(entry.iam_member)));
        return open ? { path: ['access', open[1]], message: `access granted to ${String(open[0].special_group ?? open[0].iam_member)}` } : undefined;
      }
      const members = [body.special_group, body.iam_member, body.member, ...listOf(body.members)].map(String).filter((member) => PUBLIC_MEMBERS.has(member));
      return members.length > 0 ? { path: [], message: `access granted to ${members.join(', ')}` } : undefined;
    }),
  ];
}

function sqlChecks(): TfCheck[] {
  const ip = ['settings', 'ip_configuration'];
  return [
    check(R.sqlWorld, ['google_sql_database_instance'], ({ body }) => {
      const networks = blocksOf(valueAt(body, ip), 'authorized_networks');
      const open = networks.find(([network]) => WORLD.has(String(network.value)));
      return open ? { path: [...ip, 'authorized_networks', open[1]], message: `authorized_networks ${String(open[0].name ?? '')} = ${String(open[0].value)}` } : undefined;
    }),
    check(R.sqlSsl, ['google_sql_database_instance'], ({ body }) => {
      const mode = valueAt(body, [...ip, 'ssl_mode']);
      if (mode === 'ENCRYPTED_ONLY' || mode === 'TRUSTED_CLIENT_CERTIFICATE_REQUIRED' || isExpression(mode)) return undefined;
      const required = valueAt(body, [...ip, 'require_ssl']);
      return isTrue(required) || isExpression(required) ? undefined : { path: [...ip, 'require_ssl'], message: `require_ssl ${required === undefined ? 'is not set' : `= ${String(required)}`}` };
    }),
    check(R.sqlBackups, ['google_sql_database_instance'], mustBeTrue(['settings', 'backup_configuration', 'enabled'], 'no automated backups')),
    check(R.sqlPublicIp, ['google_sql_database_instance'], ({ body }) => (isFalse(valueAt(body, [...ip, 'ipv4_enabled'])) ? undefined : { path: [...ip, 'ipv4_enabled'], message: 'ipv4_enabled is not false: the instance gets a public address' })),
  ];
}

function networkChecks(): TfCheck[] {
  const exposure = (body: Json) => {
    if (String(body.direction ?? 'INGRESS') !== 'INGRESS' || isTrue(body.disabled)) return undefined;
    const sources = listOf(body.source_ranges).map(String).filter((source) => WORLD.has(source));
    if (sources.length === 0) return undefined;
    const allows = blocksOf(body, 'allow');
    const allPorts = allows.some(([allow]) => allow.protocol === 'all' || ((allow.protocol === 'tcp' || allow.protocol === 'udp') && listOf(allow.ports).length === 0));
    const ports = allows.flatMap(([allow]) => listOf(allow.ports));
    const admin = allPorts || ADMIN_PORTS.some((port) => ports.some((spec) => portSpecCovers(String(spec), port)));
    return { admin, message: `Ingress from ${sources.join(', ')} to ${allPorts ? 'all ports' : ports.join(', ')}` };
  };
  return [
    check(R.firewallAdmin, ['google_compute_firewall'], ({ body }) => {
      const found = exposure(body);
      return found?.admin ? { path: ['source_ranges'], message: found.message } : undefined;
    }),
    check(R.firewallOpen, ['google_compute_firewall'], ({ body }) => {
      const found = exposure(body);
      return found && !found.admin && blocksOf(body, 'allow').length > 0 ? { path: ['source_ranges'], message: found.message } : undefined;
    }),
    check(R.subnetFlowLogs, ['google_compute_subnetwork'], ({ body }) => (body.log_config !== undefined || String(body.purpose ?? '').includes('PROXY') ? undefined : { path: [], message: 'No log_config: VPC flow logs are off' })),
  ];
}

function computeChecks(): TfCheck[] {
  return [
    check(R.serialPort, ['google_compute_instance', 'google_compute_instance_template'], ({ body }) => (isTrue(metadataValue(body, 'serial-port-enable')) ? { path: ['metadata'], message: 'serial-port-enable = true' } : undefined)),
    check(R.ipForwarding, ['google_compute_instance', 'google_compute_instance_template'], mustNotBeTrue(['can_ip_forward'], 'the VM can route traffic for other addresses')),
    check(R.projectSshKeys, ['google_compute_instance', 'google_compute_instance_template'], ({ body }) => {
      const value = metadataValue(body, 'block-project-ssh-keys');
      return isTrue(value) || isExpression(value) ? undefined : { path: ['metadata'], message: `block-project-ssh-keys ${value === undefined ? 'is not set' : `= ${String(value)}`}` };
    }),
    check(R.osLoginOff, ['google_compute_instance', 'google_compute_instance_template'], ({ body }) => (isFalse(metadataValue(body, 'enable-oslogin')) || String(metadataValue(body, 'enable-oslogin')).toUpperCase() === 'FALSE' ? { path: ['metadata'], message: 'enable-oslogin = false' } : undefined)),
    check(R.publicIp, ['google_compute_instance', 'google_compute_instance_template'], ({ body }) => {
      const nic = blocksOf(body, 'network_interface').find(([entry]) => entry.access_config !== undefined);
      return nic ? { path: ['network_interface', nic[1], 'access_config'], message: 'network_interface has an access_config (external IP)' } : undefined;
    }),
    check(R.shieldedVm, ['google_compute_instance'], ({ body }) => {
      const config = valueAt(body, ['shielded_instance_config']);
      return config !== undefined && !isFalse(valueAt(config, ['enable_secure_boot'])) ? undefined : { path: ['shielded_instance_config'], message: 'No shielded_instance_config with secure boot' };
    }),
    check(R.diskCsek, ['google_compute_disk', 'google_compute_instance'], ({ type, body }) => {
      const key = type === 'google_compute_disk' ? valueAt(body, ['disk_encryption_key']) : (valueAt(body, ['boot_disk', 'disk_encryption_key_raw']) ?? valueAt(body, ['boot_disk', 'kms_key_self_link']));
      return key === undefined ? { path: type === 'google_compute_disk' ? [] : ['boot_disk'], message: 'Encrypted with Google-managed keys only' } : undefined;
    }),
  ];
}

function kubernetesChecks(): TfCheck[] {
  const cluster = ['google_container_cluster'];
  return [
    check(R.gkeLegacyAbac, cluster, mustNotBeTrue(['enable_legacy_abac'], 'ABAC bypasses RBAC')),
    check(R.gkeLogging, cluster, ({ body }) => {
      const off = ['logging_service', 'monitoring_service'].filter((field) => body[field] === 'none');
      return off.length > 0 ? { path: [off[0]], message: `${off.join(' and ')} = "none"` } : undefined;
    }),
    check(R.gkeNetworkPolicy, cluster, ({ body }) => (isTrue(valueAt(body, ['network_policy', 'enabled'])) || body.datapath_provider === 'ADVANCED_DATAPATH' ? undefined : { path: ['network_policy'], message: 'network_policy is not enabled' })),
    check(R.gkeMasterOpen, cluster, ({ body }) => {
      const config = valueAt(body, ['master_authorized_networks_config']);
      if (config === undefined) return isTrue(valueAt(body, ['private_cluster_config', 'enable_private_endpoint'])) ? undefined : { path: [], message: 'No master_authorized_networks_config: the control plane is reachable from any address' };
      const open = blocksOf(config, 'cidr_blocks').find(([entry]) => WORLD.has(String(entry.cidr_block)));
      return open ? { path: ['master_authorized_networks_config', 'cidr_blocks', open[1]], message: `Authorized network ${String(open[0].cidr_block)}` } : undefined;
    }),
    check(R.gkeClientCert, cluster, ({ body }) => {
      if (isTrue(valueAt(body, ['master_auth', 'client_certificate_config', 'issue_client_certificate']))) return { path: ['master_auth'], message: 'issue_client_certificate = true' };
      const user = valueAt(body, ['master_auth', 'username']);
      return typeof user === 'string' && user !== '' ? { path: ['master_auth', 'username'], message: 'Basic authentication (master_auth.username) is set' } : undefined;
    }),
    check(R.gkeNodeImage, ['google_container_node_pool', 'google_container_cluster'], ({ body }) => {
      const image = valueAt(body, ['node_config', 'image_type']);
      return typeof image === 'string' && !isExpression(image) && !image.toUpperCase().startsWith('COS') ? { path: ['node_config', 'image_type'], message: `image_type = "${image}"` } : undefined;
    }),
    check(R.gkeSecureBoot, ['google_container_node_pool'], mustBeTrue(['node_config', 'shielded_instance_config', 'enable_secure_boot'], 'nodes boot without verifying their boot chain')),
  ];
}

export const GCP_CHECKS: readonly TfCheck[] = [...storageChecks(), ...sqlChecks(), ...networkChecks(), ...computeChecks(), ...kubernetesChecks()];
