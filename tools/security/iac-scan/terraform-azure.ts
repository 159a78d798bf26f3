/** Terraform checks of Azure resources (hashicorp/azurerm 2.x–4.x attribute names). */
import { AZURE_RULES as R } from './rules';
import { ADMIN_PORTS, blocksOf, check, isExpression, isFalse, isTrue, listOf, mustBeSet, mustBeTrue, mustNotBeTrue, portSpecCovers, valueAt, WORLD, type Fault, type Json, type TfCheck } from './terraform-model';

const OLD_TLS = /^(?:TLS)?1[._][01]$/i;
const WEB_APPS = ['azurerm_app_service', 'azurerm_linux_web_app', 'azurerm_windows_web_app', 'azurerm_function_app', 'azurerm_linux_function_app', 'azurerm_windows_function_app'];
const VMS = ['azurerm_linux_virtual_machine', 'azurerm_windows_virtual_machine', 'azurerm_linux_virtual_machine_scale_set', 'azurerm_windows_virtual_machine_scale_set'];

/** The first of several attribute names (renamed across provider versions) that is set. */
const either = (body: Json, ...names: string[]) => names.map((name) => [name, body[name]] as const).find(([, value]) => value !== undefined) ?? [names[0], undefined];

function storageChecks(): TfCheck[] {
  return [
    check(R.storageHttps, ['azurerm_storage_account'], ({ body }) => {
      const [name, value] = either(body, 'enable_https_traffic_only', 'https_traffic_only_enabled');
      return isFalse(value) ? { path: [name], message: `${name} = false` } : undefined;
    }),
    check(R.storageTls, ['azurerm_storage_account'], ({ body }) => (typeof body.min_tls_version === 'string' && OLD_TLS.test(body.min_tls_version) ? { path: ['min_tls_version'], message: `min_tls_version = "${body.min_tls_version}"` } : undefined)),
    check(R.storageNetwork, ['azurerm_storage_account'], (block, module) => {
      const inline = valueAt(block.body, ['network_rules', 'default_action']);
      if (inline === 'Deny' || isExpression(inline) || isFalse(block.body.public_network_access_enabled)) return undefined;
      if (module.referring('azurerm_storage_account_network_rules', 'storage_account_id', block).concat(module.referring('azurerm_storage_account_network_rules', 'storage_account_name', block)).some((rules) => rules.body.default_action === 'Deny')) return undefined;
      return { path: inline === undefined ? [] : ['network_rules', 'default_action'], message: inline === undefined ? 'No network rule denies traffic by default' : `network_rules.default_action = "${String(inline)}"` };
    }),
    check(R.storageLogging, ['azurerm_storage_account'], ({ body }) => {
      const logging = valueAt(body, ['queue_properties', 'logging']);
      const off = ['read', 'write', 'delete'].filter((operation) => isFalse(valueAt(logging, [operation])));
      return off.length > 0 ? { path: ['queue_properties', 'logging'], message: `Queue logging leaves out ${off.join(', ')}` } : undefined;
    }),
    check(R.storageBypass, ['azurerm_storage_account', 'azurerm_storage_account_network_rules'], ({ type, body }) => {
      const rules = type === 'azurerm_storage_account' ? valueAt(body, ['network_rules']) : body;
      const bypass = valueAt(rules, ['bypass']);
      if (rules === undefined || bypass === undefined || isExpression(bypass)) return undefined;
      return listOf(bypass).includes('AzureServices') ? undefined : { path: type === 'azurerm_storage_account' ? ['network_rules', 'bypass'] : ['bypass'], message: `bypass = [${listOf(bypass).join(', ')}]` };
    }),
    check(R.diskEncryption, ['azurerm_managed_disk'], ({ body }) => (isFalse(valueAt(body, ['encryption_settings', 'enabled'])) ? { path: ['encryption_settings', 'enabled'], message: 'encryption_settings.enabled = false' } : undefined)),
  ];
}

function networkChecks(): TfCheck[] {
  const inboundOpen = (rule: Json) => {
    if (String(rule.access).toLowerCase() !== 'allow' || String(rule.direction).toLowerCase() !== 'inbound') return undefined;
    const sources = [rule.source_address_prefix, ...listOf(rule.source_address_prefixes)].map(String);
    const ports = [rule.destination_port_range, ...listOf(rule.destination_port_ranges)];
    const exposed = ADMIN_PORTS.filter((port) => ports.some((spec) => portSpecCovers(spec, port)));
    return sources.some((source) => WORLD.has(source)) && exposed.length > 0 ? `Rule ${String(rule.name)} allows ${exposed.join(' and ')} from ${sources.join(', ')}` : undefined;
  };
  return [
    check(R.nsgAdminOpen, ['azurerm_network_security_group', 'azurerm_network_security_rule'], ({ type, body }) => {
      if (type === 'azurerm_network_security_rule') {
        const message = inboundOpen(body);
        return message ? { path: ['destination_port_range'], message } : undefined;
      }
      return blocksOf(body, 'security_rule').flatMap(([rule, index]): Fault[] => {
        const message = inboundOpen(rule);
        return message ? [{ path: ['security_rule', index], message }] : [];
      });
    }),
    check(R.flowLog, ['azurerm_network_watcher_flow_log'], ({ body }) => {
      if (isFalse(body.enabled)) return { path: ['enabled'], message: 'The flow log is disabled' };
      const days = Number(valueAt(body, ['retention_policy', 'days']));
      if (isFalse(valueAt(body, ['retention_policy', 'enabled'])) || (Number.isFinite(days) && days > 0 && days < 90)) return { path: ['retention_policy'], message: `Retention ${isFalse(valueAt(body, ['retention_policy', 'enabled'])) ? 'disabled' : `${days} days`}` };
      return undefined;
    }),
    check(R.gatewayWaf, ['azurerm_application_gateway'], ({ body }) => {
      const tier = String(valueAt(body, ['sku', 'tier']) ?? '');
      if (body.firewall_policy_id !== undefined || (tier.startsWith('WAF') && !isFalse(valueAt(body, ['waf_configuration', 'enabled'])))) return undefined;
      return { path: ['sku', 'tier'], message: `SKU tier ${tier || '?'} without a WAF configuration or firewall policy` };
    }),
  ];
}

function computeChecks(): TfCheck[] {
  return [
    check(R.aksRbac, ['azurerm_kubernetes_cluster'], ({ body }) => {
      const legacy = valueAt(body, ['role_based_access_control', 'enabled']);
      if (isFalse(legacy)) return { path: ['role_based_access_control', 'enabled'], message: 'role_based_access_control.enabled = false' };
      return isFalse(body.role_based_access_control_enabled) ? { path: ['role_based_access_control_enabled'], message: 'role_based_access_control_enabled = false' } : undefined;
    }),
    check(R.aksDashboard, ['azurerm_kubernetes_cluster'], mustNotBeTrue(['addon_profile', 'kube_dashboard', 'enabled'], 'the dashboard is a known way into clusters')),
    check(R.aksNetworkPolicy, ['azurerm_kubernetes_cluster'], mustBeSet(['network_profile', 'network_policy'], 'No network_profile.network_policy: every pod can reach every other')),
    check(R.aksMonitoring, ['azurerm_kubernetes_cluster'], ({ body }) => {
      const legacy = valueAt(body, ['addon_profile', 'oms_agent', 'enabled']);
      return isTrue(legacy) || isExpression(legacy) || body.oms_agent !== undefined ? undefined : { path: ['addon_profile', 'oms_agent'], message: 'The oms_agent add-on is not enabled' };
    }),
    check(R.aksApiOpen, ['azurerm_kubernetes_cluster'], ({ body }) =>
      isTrue(body.private_cluster_enabled) || body.api_server_authorized_ip_ranges !== undefined || valueAt(body, ['api_server_access_profile', 'authorized_ip_ranges']) !== undefined
        ? undefined
        : { path: [], message: 'Neither private_cluster_enabled nor authorized IP ranges are set' }),
    check(R.appHttps, WEB_APPS, mustBeTrue(['https_only'], 'clients can connect over plain HTTP')),
    check(R.appTls, WEB_APPS, ({ body }) => {
      const version = valueAt(body, ['site_config', 'min_tls_version']) ?? valueAt(body, ['site_config', 'minimum_tls_version']);
      return typeof version === 'string' && OLD_TLS.test(version) ? { path: ['site_config', 'min_tls_version'], message: `min_tls_version = "${version}"` } : undefined;
    }),
    check(R.appAuth, WEB_APPS, (block) => (block.body.auth_settings_v2 !== undefined ? undefined : mustBeTrue(['auth_settings', 'enabled'], 'anyone who reaches the app is served')(block))),
    check(R.appFtp, WEB_APPS, ({ body }) => {
      const state = valueAt(body, ['site_config', 'ftps_state']);
      return state === 'Disabled' || state === 'FtpsOnly' || isExpression(state) ? undefined : { path: ['site_config', 'ftps_state'], message: `ftps_state = ${String(state ?? 'AllAllowed (default)')}` };
    }),
    check(R.vmPassword, ['azurerm_linux_virtual_machine', 'azurerm_linux_virtual_machine_scale_set', 'azurerm_virtual_machine'], ({ type, body }) => {
      const path = type === 'azurerm_virtual_machine' ? ['os_profile_linux_config', 'disable_password_authentication'] : ['disable_password_authentication'];
      return isFalse(valueAt(body, path)) ? { path, message: 'disable_password_authentication = false' } : undefined;
    }),
    check(R.vmExtensions, VMS, ({ body }) => (isFalse(body.allow_extension_operations) || isExpression(body.allow_extension_operations) ? undefined : { path: ['allow_extension_operations'], message: 'allow_extension_operations is not false: extensions can run code as root on the VM' })),
    check(R.vmHostEncryption, VMS, mustBeTrue(['encryption_at_host_enabled'], 'temp disks and disk caches are not encrypted')),
  ];
}

function dataChecks(): TfCheck[] {
  const servers = ['azurerm_mssql_server', 'azurerm_sql_server', 'azurerm_mysql_server', 'azurerm_postgresql_server', 'azurerm_mariadb_server', 'azurerm_mysql_flexible_server', 'azurerm_postgresql_flexible_server'];
  return [
    check(R.sqlPublic, servers.filter((type) => type !== 'azurerm_sql_server' && !type.endsWith('flexible_server')), ({ body }) => (isFalse(body.public_network_access_enabled) || isExpression(body.public_network_access_enabled) ? undefined : { path: ['public_network_access_enabled'], message: `public_network_access_enabled = ${String(body.public_network_access_enabled ?? 'true (default)')}` })),
    check(R.sqlAuditing, ['azurerm_mssql_server', 'azurerm_sql_server'], (block, module) =>
      block.body.extended_auditing_policy !== undefined || module.referring('azurerm_mssql_server_extended_auditing_policy', 'server_id', block).length > 0
        ? undefined
        : { path: [], message: 'No extended_auditing_policy for this server' }),
    check(R.sqlAlerts, ['azurerm_mssql_server_security_alert_policy'], ({ body }) => {
      const disabled = listOf(body.disabled_alerts).filter((alert) => alert !== '');
      if (disabled.length > 0) return { path: ['disabled_alerts'], message: `Disabled alerts: ${disabled.join(', ')}` };
      return isTrue(body.email_account_admins) ? undefined : { path: ['email_account_admins'], message: 'email_account_admins is not true' };
    }),
    check(R.dbSsl, ['azurerm_mysql_server', 'azurerm_postgresql_server', 'azurerm_mariadb_server'], ({ body }) => (isFalse(body.ssl_enforcement_enabled) ? { path: ['ssl_enforcement_enabled'], message: 'ssl_enforcement_enabled = false' } : undefined)),
    check(R.postgresLogging, ['azurerm_postgresql_configuration', 'azurerm_postgresql_flexible_server_configuration'], ({ body }) =>
      ['log_checkpoints', 'log_connections', 'log_disconnections', 'connection_throttling'].includes(String(body.name)) && String(body.value).toLowerCase() === 'off' ? { path: ['value'], message: `${String(body.name)} = off` } : undefined),
    check(R.keyVaultPurge, ['azurerm_key_vault'], mustBeTrue(['purge_protection_enabled'], 'a deleted vault and its keys can be purged at once')),
    check(R.keyVaultFirewall, ['azurerm_key_vault'], ({ body }) => {
      const action = valueAt(body, ['network_acls', 'default_action']);
      return action === 'Deny' || isExpression(action) ? undefined : { path: action === undefined ? [] : ['network_acls', 'default_action'], message: action === undefined ? 'No network_acls' : `network_acls.default_action = "${String(action)}"` };
    }),
    check(R.keyExpiry, ['azurerm_key_vault_key'], mustBeSet(['expiration_date'], 'No expiration_date')),
    check(R.secretExpiry, ['azurerm_key_vault_secret'], mustBeSet(['expiration_date'], 'No expiration_date')),
  ];
}

function governanceChecks(): TfCheck[] {
  return [
    check(R.logRetention, ['azurerm_monitor_log_profile'], ({ body }) => {
      const days = Number(valueAt(body, ['retention_policy', 'days']));
      return isTrue(valueAt(body, ['retention_policy', 'enabled'])) && Number.isFinite(days) && days < 365 ? { path: ['retention_policy', 'days'], message: `Activity logs kept ${days} days` } : undefined;
    }),
    check(R.logCategories, ['azurerm_monitor_log_profile'], ({ body }) => {
      const categories = listOf(body.categories).map(String);
      const missing = ['Write', 'Delete', 'Action'].filter((category) => !categories.includes(category));
      return isExpression(body.categories) || missing.length === 0 ? undefined : { path: ['categories'], message: `Not captured: ${missing.join(', ')}` };
    }),
    check(R.customOwnerRole, ['azurerm_role_definition'], ({ body }) => (listOf(valueAt(body, ['permissions', 'actions'])).includes('*') ? { path: ['permissions', 'actions'], message: 'permissions.actions = ["*"]' } : undefined)),
    check(R.defenderFree, ['azurerm_security_center_subscription_pricing'], ({ body }) => (body.tier === 'Free' ? { path: ['tier'], message: 'tier = "Free"' } : undefined)),
    check(R.securityContact, ['azurerm_security_center_contact'], ({ body }) => {
      const off = ['alert_notifications', 'alerts_to_admins'].filter((field) => isFalse(body[field]));
      return off.length > 0 ? { path: [off[0]], message: `${off.join(' and ')} = false` } : undefined;
    }),
  ];
}

export const AZURE_CHECKS: readonly TfCheck[] = [...storageChecks(), ...networkChecks(), ...computeChecks(), ...dataChecks(), ...governanceChecks()];
