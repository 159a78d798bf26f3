export { importEsm } from '../../src/tools/sdk';
