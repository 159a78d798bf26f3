/** The yardstick: raw Fastify answering one small JSON object, nothing else. Run as a child process. */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
// The webhook receiver of bench/egress.ts.
app.post('/hook', async () => ({ received: true }));
app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' }).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
