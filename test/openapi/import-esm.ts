export { importEsm } from '@tos/sdk';
