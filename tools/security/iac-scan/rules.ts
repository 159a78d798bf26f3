/** iac-scan's rules: one catalogue for the checks, the input enum and the documentation table. */

export const IAC_SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type IacSeverity = (typeof IAC_SEVERITIES)[number];

export interface IacRule {
  id: string;
  severity: IacSeverity;
  title: string;
  remediation: string;
  /** The CIS benchmark recommendation the rule checks, where one corresponds exactly (`CIS AWS 1.2.0 4.1`). */
  cis?: string;
}

const rule = (id: string, severity: IacSeverity, title: string, remediation: string, cis?: string): IacRule => ({ id, severity, title, remediation, ...(cis && { cis }) });

export const KUBERNETES_RULES = {
  privileged: rule('k8s/privileged-container', 'critical', 'Container runs privileged', 'Remove securityContext.privileged or set it to false; grant only the capabilities needed.'),
  privilegeEscalation: rule('k8s/allow-privilege-escalation', 'medium', 'Container may gain more privileges than its parent', 'Set securityContext.allowPrivilegeEscalation: false.'),
  rootUser: rule('k8s/run-as-root-user', 'high', 'Container runs as user 0 (root)', 'Set securityContext.runAsUser to a non-zero UID and runAsNonRoot: true.'),
  nonRootUnset: rule('k8s/run-as-non-root-unset', 'medium', 'Container may run as root', 'Set securityContext.runAsNonRoot: true (pod or container) and a non-zero runAsUser.'),
  writableRoot: rule('k8s/writable-root-filesystem', 'low', 'Root filesystem is writable', 'Set securityContext.readOnlyRootFilesystem: true and mount writable volumes where needed.'),
  addedCapabilities: rule('k8s/added-capabilities', 'high', 'Container adds Linux capabilities', 'Remove securityContext.capabilities.add, or keep only the one capability the process needs (never SYS_ADMIN or ALL).'),
  capabilitiesNotDropped: rule('k8s/capabilities-not-dropped', 'low', 'Container keeps the default capabilities', 'Set securityContext.capabilities.drop: ["ALL"] and add back only what is needed.'),
  latestImage: rule('k8s/image-latest-or-untagged', 'medium', 'Image uses :latest or no tag', 'Pin the image to a version tag or, better, a digest (image@sha256:…).'),
  noLimits: rule('k8s/missing-resource-limits', 'medium', 'Container has no CPU or memory limit', 'Set resources.limits.cpu and resources.limits.memory.'),
  noRequests: rule('k8s/missing-resource-requests', 'low', 'Container has no CPU or memory request', 'Set resources.requests.cpu and resources.requests.memory so the scheduler can place the pod.'),
  noLiveness: rule('k8s/missing-liveness-probe', 'low', 'Container has no liveness probe', 'Add a livenessProbe so a hung process is restarted.'),
  noReadiness: rule('k8s/missing-readiness-probe', 'low', 'Container has no readiness probe', 'Add a readinessProbe so traffic only reaches a ready container.'),
  secretInEnv: rule('k8s/secret-in-env', 'high', 'Secret-looking environment variable has a literal value', 'Move the value into a Secret and use env[].valueFrom.secretKeyRef.'),
  hostPort: rule('k8s/host-port', 'medium', 'Container binds a host port', 'Remove ports[].hostPort; expose the pod through a Service instead.'),
  hostNetwork: rule('k8s/host-network', 'high', "Pod shares the node's network namespace", 'Remove spec.hostNetwork or set it to false.'),
  hostPid: rule('k8s/host-pid', 'high', "Pod shares the node's process namespace", 'Remove spec.hostPID or set it to false.'),
  hostIpc: rule('k8s/host-ipc', 'high', "Pod shares the node's IPC namespace", 'Remove spec.hostIPC or set it to false.'),
  hostPath: rule('k8s/host-path-volume', 'high', "Pod mounts a directory of the node (hostPath)", 'Use a PersistentVolumeClaim, emptyDir, ConfigMap or Secret instead of hostPath.'),
  seccomp: rule('k8s/seccomp-unconfined', 'low', 'No seccomp profile (or Unconfined)', 'Set securityContext.seccompProfile.type: RuntimeDefault.'),
  rbacWildcard: rule('k8s/rbac-wildcard', 'high', 'Role grants every verb or resource (*)', 'List the verbs and resources the subject needs instead of "*".'),
  rbacPrivilegedBinding: rule('k8s/rbac-binding-to-privileged-role', 'high', 'Binding grants cluster-admin, admin, edit or another high-privilege role', 'Bind a Role that lists only the verbs and resources the subject needs; keep cluster-admin for break-glass accounts.'),
} as const;

export const DOCKERFILE_RULES = {
  noUser: rule('dockerfile/no-user', 'high', 'Image runs as root (no USER in the final stage)', 'Add a USER instruction with a non-root user to the final stage.'),
  userRoot: rule('dockerfile/user-root', 'high', 'Final USER is root', 'Switch to a non-root user (USER app or USER 10001) after the steps that need root.'),
  latestBase: rule('dockerfile/base-image-latest-or-untagged', 'medium', 'Base image uses :latest or no tag', 'Pin FROM to a version tag or a digest (image@sha256:…).'),
  curlPipeShell: rule('dockerfile/curl-pipe-shell', 'high', 'Downloads a script and pipes it to a shell', 'Download to a file, verify its checksum or signature, then run it.'),
  addUrl: rule('dockerfile/add-from-url', 'medium', 'ADD fetches a URL', 'Use RUN curl/wget with a checksum check (or ADD --checksum=…), or COPY a vendored file.'),
  addLocal: rule('dockerfile/add-instead-of-copy', 'low', 'ADD used for a plain local file', 'Use COPY; ADD only when unpacking a local archive is intended.'),
  secretInEnv: rule('dockerfile/secret-in-env', 'high', 'Secret-looking ENV or ARG has a value in the Dockerfile', 'Pass secrets at build time with RUN --mount=type=secret, or at run time; never bake them into layers.'),
  noHealthcheck: rule('dockerfile/missing-healthcheck', 'low', 'Final stage has no HEALTHCHECK', 'Add HEALTHCHECK CMD … (or rely on the orchestrator\'s probes and say so).'),
  exposeSsh: rule('dockerfile/expose-ssh', 'medium', 'Image exposes port 22 (SSH)', 'Do not run SSH in containers; use docker exec / kubectl exec.'),
  chmod777: rule('dockerfile/chmod-777', 'medium', 'Files made world-writable (chmod 777)', 'Grant the least permissions needed (e.g. chmod 755, chown to the app user).'),
  sudo: rule('dockerfile/sudo', 'medium', 'RUN uses sudo', 'Build steps already run as root: drop sudo; use USER to change users.'),
  aptUpdateAlone: rule('dockerfile/apt-get-update-alone', 'low', 'apt-get update in a RUN without an install', 'Run apt-get update && apt-get install … in one RUN so the cache layer is never stale.'),
} as const;

/** Docker Compose services (compose.yaml, docker-compose*.yml, …). */
export const COMPOSE_RULES = {
  privileged: rule('compose/privileged', 'critical', 'Service runs privileged', 'Remove privileged: true; add only the capabilities the service needs (cap_add).'),
  hostNetwork: rule('compose/host-network', 'high', "Service shares the host's network namespace", 'Remove network_mode: host; publish the ports the service serves.'),
  hostNamespace: rule('compose/host-pid-or-ipc', 'high', "Service shares the host's PID or IPC namespace", 'Remove pid: host and ipc: host.'),
  dockerSocket: rule('compose/docker-socket-mount', 'critical', 'Service mounts the Docker socket', 'Do not mount /var/run/docker.sock: it is root on the host. Use a socket proxy that allows only the calls needed.'),
  sensitiveMount: rule('compose/host-system-mount', 'high', "Service mounts a system directory of the host (/, /etc, /proc, /sys, /root, …)", 'Mount only the application directories the service needs, read-only where possible.'),
  secretInEnv: rule('compose/secret-in-environment', 'high', 'Secret-looking environment variable has a literal value', 'Use Compose secrets (secrets: …) or an env_file kept out of version control.'),
  addedCapabilities: rule('compose/added-capabilities', 'high', 'Service adds powerful Linux capabilities', 'Remove cap_add entries such as ALL, SYS_ADMIN, NET_ADMIN, SYS_PTRACE; add back only what the process needs.'),
  securityOptOut: rule('compose/security-profile-disabled', 'high', 'Seccomp or AppArmor is disabled (security_opt: …:unconfined)', 'Remove seccomp:unconfined / apparmor:unconfined from security_opt.'),
  latestImage: rule('compose/image-latest-or-untagged', 'medium', 'Image uses :latest or no tag', 'Pin the image to a version tag or a digest (image@sha256:…).'),
  rootUser: rule('compose/user-root', 'medium', 'Service runs as root (user: root or 0)', 'Set user: to a non-root UID.'),
  allInterfaces: rule('compose/port-on-all-interfaces', 'low', 'Port published on every interface of the host', 'Publish on one address (127.0.0.1:8080:80) unless the port must be reachable from other machines.'),
} as const;

/** AWS resources, from Terraform and CloudFormation alike. */
export const AWS_RULES = {
  s3PublicAcl: rule('aws/s3-public-acl', 'critical', 'S3 bucket ACL grants public access', 'Set the ACL to private and grant access through bucket policies to named principals.'),
  s3NoPublicAccessBlock: rule('aws/s3-no-public-access-block', 'medium', 'S3 bucket has no public access block (or one that lets public access through)', 'Add aws_s3_bucket_public_access_block (PublicAccessBlockConfiguration) with all four settings true.'),
  s3Unencrypted: rule('aws/s3-no-default-encryption', 'medium', 'S3 bucket declares no default encryption', 'Configure server-side encryption, preferably aws:kms with a customer managed key.'),
  s3Versioning: rule('aws/s3-versioning-disabled', 'medium', 'S3 bucket versioning is not enabled', 'Enable versioning so overwritten or deleted objects can be recovered.'),
  s3Logging: rule('aws/s3-access-logging-disabled', 'low', 'S3 bucket access logging is not enabled', 'Enable server access logging to a separate log bucket.'),
  s3ObjectKms: rule('aws/s3-object-not-kms-encrypted', 'low', 'S3 object is not encrypted with a KMS key', 'Set kms_key_id to a customer managed KMS key.'),
  sgAdminOpen: rule('aws/sg-admin-port-open-to-world', 'critical', 'Security group allows SSH, RDP or all ports from the internet', 'Allow 22 and 3389 only from known address ranges, or use SSM Session Manager / a bastion.', 'CIS AWS 1.2.0 4.1, 4.2'),
  sgOpen: rule('aws/sg-open-to-world', 'medium', 'Security group allows ingress from the internet', 'Restrict the source to the address ranges that need the port, or put the service behind a load balancer.'),
  sgDescription: rule('aws/sg-no-description', 'low', 'Security group or rule has no description', 'Describe each security group and rule so reviewers know why it exists.'),
  ebsUnencrypted: rule('aws/ebs-unencrypted', 'high', 'EBS volume is not encrypted', 'Set encrypted = true (and kms_key_id), or enable EBS encryption by default in the account.'),
  instanceDiskUnencrypted: rule('aws/instance-root-volume-unencrypted', 'high', 'Instance or launch configuration root volume is not encrypted', 'Set root_block_device { encrypted = true }.'),
  imdsV1: rule('aws/instance-imdsv1-enabled', 'medium', 'Instance metadata service v1 is allowed', 'Set metadata_options { http_tokens = "required" } (IMDSv2 only).'),
  userDataSecret: rule('aws/secret-in-user-data', 'high', 'User data holds credentials', 'Fetch secrets at boot from Secrets Manager or SSM Parameter Store with the instance role.'),
  providerKeys: rule('aws/provider-hard-coded-credentials', 'critical', 'AWS provider has hard-coded access keys', 'Remove access_key/secret_key; use a profile, environment variables or an assumed role.'),
  subnetPublicIp: rule('aws/subnet-assigns-public-ip', 'low', 'Subnet gives instances a public IP by default', 'Set map_public_ip_on_launch = false; assign public addresses explicitly where needed.'),
  vpcFlowLogs: rule('aws/vpc-flow-logs-disabled', 'medium', 'VPC has no flow log', 'Add an aws_flow_log for the VPC (traffic_type ALL).', 'CIS AWS 1.2.0 2.9'),
  vpcDefaultSg: rule('aws/vpc-default-sg-not-restricted', 'low', "VPC's default security group is not restricted", 'Manage it with aws_default_security_group and no ingress or egress rules.', 'CIS AWS 1.2.0 4.3'),
  dbUnencrypted: rule('aws/db-storage-unencrypted', 'high', 'Database storage is not encrypted (RDS, Aurora, Neptune, DocumentDB)', 'Set storage_encrypted = true (StorageEncrypted: true) with a KMS key; an existing database needs a snapshot restore.'),
  dbPublic: rule('aws/db-publicly-accessible', 'critical', 'Database instance is publicly accessible', 'Set publicly_accessible = false and reach it from inside the VPC.'),
  dbIamAuth: rule('aws/db-iam-auth-disabled', 'low', 'Database IAM authentication is not enabled', 'Set iam_database_authentication_enabled = true and use IAM tokens instead of static passwords.'),
  dbDeletionProtection: rule('aws/db-deletion-protection-disabled', 'low', 'Database deletion protection is not enabled', 'Set deletion_protection = true.'),
  dbBackups: rule('aws/db-backups-disabled', 'medium', 'Automated database backups are disabled (retention 0)', 'Set backup_retention_period to at least 7 days.'),
  dbLogs: rule('aws/db-logs-not-exported', 'low', 'Database logs are not exported to CloudWatch', 'Set enabled_cloudwatch_logs_exports (audit, error, general, slowquery / postgresql).'),
  kmsRotation: rule('aws/kms-key-rotation-disabled', 'medium', 'KMS key rotation is not enabled', 'Set enable_key_rotation = true.', 'CIS AWS 1.2.0 2.8'),
  iamAdmin: rule('aws/iam-policy-full-admin', 'critical', 'IAM policy allows every action on every resource ("*" on "*")', 'Grant the actions and resources the principal needs.', 'CIS AWS 1.2.0 1.22'),
  iamWildcard: rule('aws/iam-policy-wildcard-action', 'high', 'IAM policy allows every action of a service (service:*) or on every resource', 'List the actions needed and scope Resource to ARNs.'),
  policyPublicPrincipal: rule('aws/policy-public-principal', 'critical', 'Resource policy allows any principal ("*") without a condition', 'Name the accounts or roles allowed, or add a condition (aws:SourceVpc, aws:PrincipalOrgID, …).'),
  ecrMutable: rule('aws/ecr-tags-mutable', 'low', 'ECR repository allows tags to be overwritten', 'Set image_tag_mutability = "IMMUTABLE".'),
  ecrScan: rule('aws/ecr-scan-on-push-disabled', 'low', 'ECR repository does not scan images on push', 'Set image_scanning_configuration { scan_on_push = true }.'),
  eksPublic: rule('aws/eks-endpoint-public', 'medium', 'EKS API endpoint is reachable from the whole internet', 'Set endpoint_public_access = false, or restrict public_access_cidrs.'),
  eksSecrets: rule('aws/eks-secrets-unencrypted', 'medium', 'EKS does not encrypt Kubernetes secrets with KMS', 'Add encryption_config { resources = ["secrets"] provider { key_arn = … } }.'),
  eksLogging: rule('aws/eks-control-plane-logging-disabled', 'low', 'EKS control plane logging is not enabled for all log types', 'Set enabled_cluster_log_types = ["api", "audit", "authenticator", "controllerManager", "scheduler"].'),
  searchUnencrypted: rule('aws/elasticsearch-unencrypted', 'high', 'Elasticsearch/OpenSearch domain is not encrypted at rest', 'Set encrypt_at_rest { enabled = true } (and node_to_node_encryption).'),
  searchOutsideVpc: rule('aws/elasticsearch-outside-vpc', 'medium', 'Elasticsearch/OpenSearch domain has a public endpoint (no VPC)', 'Add vpc_options so the domain is reached from inside the VPC.'),
  lbLogs: rule('aws/load-balancer-access-logs-disabled', 'low', 'Load balancer access logging is not enabled', 'Add access_logs { bucket = … enabled = true }.'),
  lbHttp: rule('aws/load-balancer-plain-http', 'medium', 'Load balancer listens on plain HTTP', 'Listen on HTTPS with an ACM certificate and redirect HTTP to HTTPS.'),
  lambdaSecret: rule('aws/lambda-secret-in-environment', 'high', 'Lambda environment variable holds a credential', 'Read secrets at run time from Secrets Manager or SSM Parameter Store.'),
  lambdaTracing: rule('aws/lambda-tracing-disabled', 'low', 'Lambda X-Ray tracing is not active', 'Set tracing_config { mode = "Active" }.'),
  trailMultiRegion: rule('aws/cloudtrail-not-multi-region', 'medium', 'CloudTrail trail does not cover all regions', 'Set is_multi_region_trail = true.', 'CIS AWS 1.2.0 2.1'),
  trailValidation: rule('aws/cloudtrail-log-validation-disabled', 'medium', 'CloudTrail log file validation is not enabled', 'Set enable_log_file_validation = true.', 'CIS AWS 1.2.0 2.2'),
  trailKms: rule('aws/cloudtrail-not-kms-encrypted', 'medium', 'CloudTrail logs are not encrypted with KMS', 'Set kms_key_id to a customer managed KMS key.', 'CIS AWS 1.2.0 2.7'),
} as const;

export const AZURE_RULES = {
  storageHttps: rule('azure/storage-https-not-required', 'high', "Storage account accepts plain HTTP ('Secure transfer required' off)", 'Set enable_https_traffic_only (https_traffic_only_enabled) = true.', 'CIS Azure 1.1.0 3.1'),
  storageTls: rule('azure/storage-old-tls', 'medium', 'Storage account accepts TLS older than 1.2', 'Set min_tls_version = "TLS1_2".'),
  storageNetwork: rule('azure/storage-network-open', 'medium', 'Storage account accepts traffic from every network', 'Set network_rules { default_action = "Deny" } and allow the networks that need it.'),
  storageLogging: rule('azure/storage-queue-logging-incomplete', 'low', 'Storage queue logging leaves out reads, writes or deletes', 'Set queue_properties { logging { read = true write = true delete = true } }.'),
  storageBypass: rule('azure/storage-trusted-services-blocked', 'low', 'Storage network rules do not let trusted Azure services through', 'Add "AzureServices" to bypass.'),
  nsgAdminOpen: rule('azure/nsg-admin-port-open-to-world', 'critical', 'Network security group allows SSH or RDP from the internet', 'Restrict source_address_prefix to known ranges, or use Azure Bastion / just-in-time access.', 'CIS Azure 1.1.0 6.1, 6.2'),
  flowLog: rule('azure/nsg-flow-log-retention-short', 'low', 'NSG flow log is disabled or kept under 90 days', 'Enable the flow log and its retention_policy with days >= 90.'),
  aksRbac: rule('azure/aks-rbac-disabled', 'high', 'AKS cluster has Kubernetes RBAC disabled', 'Enable role_based_access_control (role_based_access_control_enabled = true).'),
  aksDashboard: rule('azure/aks-dashboard-enabled', 'medium', 'AKS cluster runs the Kubernetes dashboard', 'Disable the kube_dashboard add-on.'),
  aksNetworkPolicy: rule('azure/aks-no-network-policy', 'medium', 'AKS cluster has no network policy', 'Set network_profile { network_policy = "azure" or "calico" }.'),
  aksMonitoring: rule('azure/aks-monitoring-disabled', 'low', 'AKS cluster does not send logs to Azure Monitor', 'Enable the oms_agent add-on with a Log Analytics workspace.'),
  aksApiOpen: rule('azure/aks-api-server-open', 'medium', 'AKS API server accepts connections from any address', 'Set api_server_authorized_ip_ranges, or make the cluster private.'),
  appHttps: rule('azure/app-service-http-allowed', 'medium', 'App Service accepts plain HTTP', 'Set https_only = true.'),
  appTls: rule('azure/app-service-old-tls', 'medium', 'App Service accepts TLS older than 1.2', 'Set site_config { min_tls_version = "1.2" }.'),
  appAuth: rule('azure/app-service-auth-disabled', 'low', 'App Service authentication is not enabled', 'Enable auth_settings with an identity provider.'),
  appFtp: rule('azure/app-service-ftp-enabled', 'medium', 'App Service allows FTP deployments', 'Set site_config { ftps_state = "Disabled" } (or "FtpsOnly").'),
  gatewayWaf: rule('azure/app-gateway-no-waf', 'medium', 'Application gateway has no web application firewall', 'Use a WAF_v2 SKU with waf_configuration or a firewall_policy_id in Prevention mode.'),
  vmPassword: rule('azure/vm-password-authentication', 'medium', 'Linux VM allows password authentication', 'Set disable_password_authentication = true and use SSH keys.'),
  vmExtensions: rule('azure/vm-extensions-allowed', 'low', 'VM allows extension operations', 'Set allow_extension_operations = false unless extensions are managed.'),
  vmHostEncryption: rule('azure/vm-no-encryption-at-host', 'low', 'VM does not encrypt at host (temp disks and caches)', 'Set encryption_at_host_enabled = true.'),
  keyVaultPurge: rule('azure/key-vault-purge-protection-disabled', 'medium', 'Key vault purge protection is not enabled', 'Set purge_protection_enabled = true.'),
  keyVaultFirewall: rule('azure/key-vault-network-open', 'medium', 'Key vault accepts traffic from every network', 'Add network_acls { default_action = "Deny" bypass = "AzureServices" }.'),
  keyExpiry: rule('azure/key-vault-key-no-expiry', 'medium', 'Key vault key has no expiration date', 'Set expiration_date and rotate before it.', 'CIS Azure 1.1.0 8.1'),
  secretExpiry: rule('azure/key-vault-secret-no-expiry', 'medium', 'Key vault secret has no expiration date', 'Set expiration_date and rotate before it.', 'CIS Azure 1.1.0 8.2'),
  logRetention: rule('azure/activity-log-retention-short', 'medium', 'Activity log profile keeps logs under 365 days', 'Set retention_policy { enabled = true days = 365 } (or keep them forever).'),
  logCategories: rule('azure/activity-log-categories-incomplete', 'low', 'Activity log profile does not capture Write, Delete and Action', 'Set categories = ["Write", "Delete", "Action"].'),
  sqlPublic: rule('azure/database-public-network-access', 'high', 'Database server accepts connections from public networks', 'Set public_network_access_enabled = false and use private endpoints.'),
  sqlAuditing: rule('azure/sql-auditing-disabled', 'medium', 'SQL server has no auditing policy', 'Add an extended_auditing_policy (retention of 90 days or more).'),
  sqlAlerts: rule('azure/sql-threat-alerts-incomplete', 'low', 'SQL threat detection has alert types disabled or does not e-mail admins', 'Leave disabled_alerts empty and set email_account_admins = true.'),
  dbSsl: rule('azure/database-ssl-not-enforced', 'high', 'Database server does not enforce SSL connections', 'Set ssl_enforcement_enabled = true and ssl_minimal_tls_version_enforced = "TLS1_2".'),
  postgresLogging: rule('azure/postgres-logging-setting-off', 'low', 'PostgreSQL server parameter for connection or checkpoint logging (or throttling) is off', 'Set log_checkpoints, log_connections, log_disconnections and connection_throttling to on.'),
  customOwnerRole: rule('azure/custom-owner-role', 'high', 'Custom role grants every action ("*") like Owner', 'List the actions the role needs instead of "*".'),
  defenderFree: rule('azure/defender-free-tier', 'low', 'Microsoft Defender for Cloud is on the free tier', 'Set tier = "Standard".'),
  securityContact: rule('azure/security-contact-alerts-off', 'low', 'Security alerts are not e-mailed (contact or admins)', 'Set alert_notifications = true and alerts_to_admins = true.'),
  diskEncryption: rule('azure/managed-disk-encryption-disabled', 'medium', 'Managed disk encryption settings are disabled', 'Enable encryption_settings or set disk_encryption_set_id.'),
} as const;

export const GCP_RULES = {
  bucketPublic: rule('gcp/storage-bucket-public', 'critical', 'Cloud Storage bucket is readable by allUsers or allAuthenticatedUsers', 'Remove allUsers and allAuthenticatedUsers from the bucket IAM members.', 'CIS GCP 1.1.0 5.1'),
  bucketUniform: rule('gcp/storage-uniform-access-disabled', 'medium', 'Cloud Storage bucket uses per-object ACLs', 'Set uniform_bucket_level_access = true.'),
  bucketVersioning: rule('gcp/storage-versioning-disabled', 'low', 'Cloud Storage bucket versioning is not enabled', 'Add versioning { enabled = true }.'),
  bucketLogging: rule('gcp/storage-logging-disabled', 'low', 'Cloud Storage bucket access logging is not enabled', 'Add logging { log_bucket = … }.'),
  datasetPublic: rule('gcp/bigquery-dataset-public', 'critical', 'BigQuery dataset is readable by allUsers or allAuthenticatedUsers', 'Remove the access entry for allUsers / allAuthenticatedUsers.'),
  sqlWorld: rule('gcp/sql-open-to-world', 'critical', 'Cloud SQL instance authorizes 0.0.0.0/0', 'Authorize only known networks, or use private IP and the Cloud SQL Auth Proxy.'),
  sqlSsl: rule('gcp/sql-ssl-not-required', 'medium', 'Cloud SQL instance does not require SSL', 'Set ip_configuration { require_ssl = true } (ssl_mode = "ENCRYPTED_ONLY").'),
  sqlBackups: rule('gcp/sql-backups-disabled', 'medium', 'Cloud SQL automated backups are disabled', 'Set backup_configuration { enabled = true }.'),
  sqlPublicIp: rule('gcp/sql-public-ip', 'low', 'Cloud SQL instance has a public IP', 'Set ip_configuration { ipv4_enabled = false } and use private IP.'),
  firewallAdmin: rule('gcp/firewall-admin-port-open-to-world', 'critical', 'Firewall allows SSH, RDP or all ports from the internet', 'Restrict source_ranges, or use IAP TCP forwarding (35.235.240.0/20).', 'CIS GCP 1.1.0 3.6, 3.7'),
  firewallOpen: rule('gcp/firewall-open-to-world', 'medium', 'Firewall allows ingress from the internet', 'Restrict source_ranges to the networks that need the ports.'),
  serialPort: rule('gcp/compute-serial-port-enabled', 'medium', 'VM allows interactive serial port access', 'Remove serial-port-enable or set it to false.', 'CIS GCP 1.1.0 4.5'),
  ipForwarding: rule('gcp/compute-ip-forwarding', 'low', 'VM forwards IP packets', 'Set can_ip_forward = false unless the VM is a router.', 'CIS GCP 1.1.0 4.6'),
  projectSshKeys: rule('gcp/compute-project-ssh-keys-allowed', 'medium', 'VM accepts project-wide SSH keys', 'Set metadata block-project-ssh-keys = true (or use OS Login).'),
  osLoginOff: rule('gcp/compute-os-login-disabled', 'low', 'VM turns OS Login off', 'Remove enable-oslogin = false from the metadata.'),
  publicIp: rule('gcp/compute-public-ip', 'low', 'VM has a public IP (access_config)', 'Remove access_config; reach the VM through IAP or a load balancer.'),
  shieldedVm: rule('gcp/compute-shielded-vm-disabled', 'low', 'VM is not a Shielded VM', 'Add shielded_instance_config { enable_secure_boot = true enable_vtpm = true enable_integrity_monitoring = true }.'),
  diskCsek: rule('gcp/compute-disk-no-customer-key', 'low', 'Disk is not encrypted with a customer-supplied or customer-managed key', 'Set disk_encryption_key { kms_key_self_link = … }.'),
  subnetFlowLogs: rule('gcp/subnet-flow-logs-disabled', 'low', 'Subnetwork has no VPC flow logs', 'Add log_config { aggregation_interval = … }.'),
  gkeLegacyAbac: rule('gcp/gke-legacy-abac-enabled', 'high', 'GKE legacy ABAC authorization is enabled', 'Set enable_legacy_abac = false (RBAC only).'),
  gkeLogging: rule('gcp/gke-logging-or-monitoring-disabled', 'medium', 'GKE cluster logging or monitoring is off', 'Remove logging_service/monitoring_service = "none".'),
  gkeNetworkPolicy: rule('gcp/gke-no-network-policy', 'medium', 'GKE cluster has no network policy', 'Add network_policy { enabled = true } (or use Dataplane V2).'),
  gkeMasterOpen: rule('gcp/gke-control-plane-open', 'high', 'GKE control plane accepts connections from any address', 'List only known CIDRs in master_authorized_networks_config, or make the cluster private.'),
  gkeClientCert: rule('gcp/gke-basic-auth-or-client-cert', 'medium', 'GKE cluster issues client certificates or uses basic auth', 'Remove master_auth username/password and issue_client_certificate.'),
  gkeNodeImage: rule('gcp/gke-node-image-not-cos', 'low', 'GKE nodes do not run Container-Optimized OS', 'Set node_config { image_type = "COS_CONTAINERD" }.'),
  gkeSecureBoot: rule('gcp/gke-node-secure-boot-disabled', 'low', 'GKE nodes do not use Secure Boot', 'Set node_config { shielded_instance_config { enable_secure_boot = true } }.'),
} as const;

/** Alibaba Cloud and Oracle Cloud resources. */
export const OTHER_CLOUD_RULES = {
  ossPublic: rule('alicloud/oss-bucket-public', 'critical', 'OSS bucket ACL grants public access', 'Set acl = "private".'),
  ossVersioning: rule('alicloud/oss-bucket-versioning-disabled', 'low', 'OSS bucket versioning is not enabled', 'Add versioning { status = "Enabled" }.'),
  ossLogging: rule('alicloud/oss-bucket-logging-disabled', 'low', 'OSS bucket access logging is not enabled', 'Add logging { target_bucket = … }.'),
  ossEncryption: rule('alicloud/oss-bucket-unencrypted', 'medium', 'OSS bucket has no server-side encryption', 'Add server_side_encryption_rule { sse_algorithm = "KMS" }.'),
  aliDbOpen: rule('alicloud/db-open-to-world', 'critical', 'RDS instance accepts connections from any address', 'Remove 0.0.0.0 and 0.0.0.0/0 from security_ips.'),
  aliDbSsl: rule('alicloud/db-ssl-disabled', 'medium', 'RDS instance does not use SSL', 'Set ssl_action = "Open".'),
  aliTrail: rule('alicloud/actiontrail-incomplete', 'medium', 'ActionTrail does not record all events in all regions', 'Set event_rw = "All" and trail_region = "All".'),
  ociPublic: rule('oci/bucket-public', 'critical', 'Object Storage bucket is public', 'Set access_type = "NoPublicAccess".'),
  ociVersioning: rule('oci/bucket-versioning-disabled', 'low', 'Object Storage bucket versioning is not enabled', 'Set versioning = "Enabled".'),
  ociKms: rule('oci/bucket-no-customer-key', 'low', 'Object Storage bucket is not encrypted with a customer managed key', 'Set kms_key_id.'),
} as const;

export const IAC_RULES: readonly IacRule[] = [
  ...Object.values(KUBERNETES_RULES),
  ...Object.values(DOCKERFILE_RULES),
  ...Object.values(COMPOSE_RULES),
  ...Object.values(AWS_RULES),
  ...Object.values(AZURE_RULES),
  ...Object.values(GCP_RULES),
  ...Object.values(OTHER_CLOUD_RULES),
];
export const IAC_RULE_IDS = IAC_RULES.map((candidate) => candidate.id);

/** An AWS access key id, or an `aws_secret_access_key` assignment with a value. */
export const AWS_CREDENTIAL = /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|aws_secret_access_key\s*[=:]\s*\S{20,}/i;

/** Names whose literal values in ENV/env are taken for secrets. */
export const SECRET_NAME = /passw(?:or)?d|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential/i;

export interface IacFinding {
  rule: string;
  severity: IacSeverity;
  title: string;
  file: string;
  line: number;
  /** What the finding is about: `Deployment/web container app`, `stage build`, … */
  object: string;
  message: string;
  remediation: string;
  cis?: string;
}

export function finding(found: IacRule, where: { file: string; line: number; object: string }, message: string): IacFinding {
  return { rule: found.id, severity: found.severity, title: found.title, ...where, message, remediation: found.remediation, ...(found.cis && { cis: found.cis }) };
}
