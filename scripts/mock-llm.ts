// `npm run mock-llm`: the OpenAI-compatible test server on its own, for offline
// development. Point the app at it with OPENAI_BASE_URL=http://127.0.0.1:4010/v1
// and MNEMO_CHAT_MODEL=mock-chat. Script replies with POST /__mock/replies.
import { startMockLlm } from "../testing/mock-llm";

const port = Number(process.env.MOCK_LLM_PORT ?? 4010);
startMockLlm(port).then((m) => {
  console.log(`mock LLM listening on ${m.url} (control API under /__mock/)`);
  const stop = () => m.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
});
