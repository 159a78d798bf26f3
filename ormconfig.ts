/** DataSource for the TypeORM CLI: `npm run migration:run|generate|revert`. */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/app-config';
import { buildDataSourceOptions } from './src/database/data-source-options';
import { ENTITIES } from './src/entities';

export default new DataSource(buildDataSourceOptions(loadConfig(), ENTITIES));
