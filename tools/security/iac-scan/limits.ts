/** What one iac-scan call reads; the definition states these, so they live apart from the parsers. */
export const MAX_SCANNED_FILES = 2_000;
export const MAX_FILE_BYTES = 2 * 1024 * 1024;
export const MAX_ERRORS_LISTED = 100;
/** Terraform and Helm texts held until their module or chart is read whole. */
export const MAX_HELD_BYTES = 32 * 1024 * 1024;
/** Work one Helm template may do (actions run, bytes written), so a looping template stops. */
export const MAX_TEMPLATE_STEPS = 1_000_000;
