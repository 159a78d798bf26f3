/** A service process with the test-only tools: what `npm run start:worker` is, plus TestToolsModule. */
import 'reflect-metadata';
import { runService } from '../../src/service';
import { TestToolsModule } from './test-tools.module';

void runService({ extensions: [TestToolsModule] });
