// eval:locomo's mechanics, offline: one small LoCoMo-shaped conversation goes through Mnemo's pipeline (messages,
// extraction, consolidation), each question is answered from recall and judged, against the project's test server.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { runLocomoEval } from "../scripts/eval/locomo-eval";

const conversation = {
  speaker_a: "Maya",
  speaker_b: "Jon",
  session_1_date_time: "1:56 pm on 8 May, 2023",
  session_1: [
    { speaker: "Maya", dia_id: "D1:1", text: "I adopted a puppy yesterday, his name is Rex!" },
    { speaker: "Jon", dia_id: "D1:2", text: "Congratulations, what breed?" },
    { speaker: "Maya", dia_id: "D1:3", text: "A beagle. Also, I start at the corner bakery on Monday." },
    { speaker: "Jon", dia_id: "D1:4", text: "Good luck with the new job!" },
  ],
  qa: [
    { question: "What is the name of Maya's puppy?", answer: "Rex", evidence: ["D1:1"], category: 1 },
    { question: "Where does Maya work?", answer: "a bakery", evidence: ["D1:3"], category: 4 },
    { question: "What is the name of Jon's cat?", adversarial_answer: "Tom", evidence: [], category: 5 },
  ],
};

describe("eval:locomo against the test server", () => {
  let mock: MockLlm;
  let file: string;
  beforeAll(async () => {
    mock = await startMockLlm();
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "locomo-")), "tiny.json");
    fs.writeFileSync(file, JSON.stringify([conversation]));
  });
  afterAll(async () => mock?.close());

  it("ingests through extraction, answers from recall, judges, and reports J, tokens and latency", async () => {
    mock.script(
      {
        match: "Existing related memories",
        json: { decisions: [{ op: "ADD", text: "Maya adopted a beagle puppy named Rex", kind: "fact" }] },
      },
      {
        match: "Existing related memories",
        json: { decisions: [{ op: "ADD", text: "Maya works at the corner bakery", kind: "fact" }] },
      },
      { match: "Answer the question: What is the name of Maya", content: "Rex" },
      { match: "Answer the question: Where does Maya work", content: "At home" },
      { match: "Gold answer: Rex", json: { label: "CORRECT" } },
      { match: "Gold answer: a bakery", json: { label: "WRONG" } },
    );
    const r = await runLocomoEval({
      files: [file],
      baseURL: mock.url,
      model: "mock-chat",
      judgeModel: "mock-judge",
      budget: 500,
    });
    // Category 5 is left out; one answer judged correct, one wrong.
    expect(r.questions).toBe(2);
    expect(r.J).toBe(0.5);
    expect(r.byCategory).toEqual({ "1": { J: 1, n: 1 }, "4": { J: 0, n: 1 } });
    expect(r.memories).toBe(2);
    // The answer came from Mnemo's recall: the memory the extraction learned was in front of the model.
    const asked = mock
      .chatRequests()
      .filter((q) => q.body.model === "mock-chat" && JSON.stringify(q.body).includes("Answer the question"));
    expect(asked).toHaveLength(2);
    expect(JSON.stringify(asked[0].body.messages)).toContain("Maya adopted a beagle puppy named Rex");
    // The judge saw the question, the gold answer and the generated one.
    const judged = mock.chatRequests().filter((q) => q.body.model === "mock-judge");
    expect(judged).toHaveLength(2);
    expect(judged[1].body.messages[0].content).toContain("Gold answer: a bakery");
    expect(judged[1].body.messages[0].content).toContain("Generated answer: At home");
    expect(r.memoryTokensMean).toBeGreaterThan(0);
    expect(r.promptTokensMean).toBeGreaterThan(0);
    expect(r.answerMs.p95).toBeGreaterThanOrEqual(r.recallMs.p50!);
  });

  it("runs against servers that refuse JSON mode and temperature 0, with a judge that thinks first", async () => {
    // A server of its own: what the run learns about a server (what it refuses) is kept per server.
    const strict = await startMockLlm();
    try {
      strict.refuseJsonMode = true;
      strict.refuseTemperature = true;
      strict.script(
        { match: "Existing related memories", json: { decisions: [{ op: "NONE" }] }, times: 0 },
        { match: "Answer the question", content: "<think>The memory says Rex.</think>Rex", times: 0 },
        { match: "Gold answer", content: '<think>Same name.</think>\n```json\n{"label": "CORRECT"}\n```', times: 0 },
      );
      const r = await runLocomoEval({
        files: [file],
        baseURL: strict.url,
        model: "mock-chat",
        judgeModel: "mock-judge",
        budget: 500,
      });
      expect(r.questions).toBe(2);
      expect(r.J).toBe(1);
      const judged = strict.chatRequests().filter((q) => q.body.model === "mock-judge");
      // The judge saw the answer without the thinking.
      expect(judged.at(-1)!.body.messages[0].content).toContain("Generated answer: Rex");
      expect(judged.at(-1)!.body.messages[0].content).not.toContain("The memory says");
      expect(judged.at(-1)!.body).not.toHaveProperty("temperature");
      expect(judged.at(-1)!.body).not.toHaveProperty("response_format");
    } finally {
      await strict.close();
    }
  });

  it("rides out rate limits and server errors; a wrong key stops it at once", async () => {
    mock.reset();
    mock.script(
      // Each fault twice: the SDK's own single retry meets the second, so the run's retries are what carry it.
      { match: "Existing related memories", status: 429, times: 2 },
      { match: "Existing related memories", json: { decisions: [{ op: "NONE" }] }, times: 0 },
      { match: "Gold answer: Rex", status: 503, times: 2 },
      { match: "Gold answer", json: { label: "CORRECT" }, times: 0 },
      { match: "Answer the question", content: "Rex", times: 0 },
    );
    const r = await runLocomoEval({
      files: [file],
      baseURL: mock.url,
      model: "mock-chat",
      judgeModel: "mock-judge",
      budget: 500,
      retry: { baseMs: 20 },
    });
    expect(r.questions).toBe(2);
    expect(r.J).toBe(1);
    const judged = mock.chatRequests().filter((q) => q.body.model === "mock-judge");
    expect(judged.length).toBeGreaterThanOrEqual(4); // two failed, then each question judged

    mock.reset();
    mock.script({ match: "Existing related memories", status: 401, times: 0 });
    const calls = mock.chatRequests().length;
    await expect(
      runLocomoEval({ files: [file], baseURL: mock.url, model: "mock-chat", judgeModel: "mock-judge", budget: 500 }),
    ).rejects.toThrow(/401/);
    expect(mock.chatRequests().length - calls).toBeLessThanOrEqual(2);
  });

  it("runs conversations side by side, and a resumed run answers only what the earlier one had not", async () => {
    mock.reset();
    const two = path.join(path.dirname(file), "two.json");
    const other = { ...conversation, speaker_a: "Ana", qa: conversation.qa.map((q) => ({ ...q })) };
    fs.writeFileSync(two, JSON.stringify([conversation, other]));
    mock.script(
      { match: "Existing related memories", json: { decisions: [{ op: "NONE" }] }, times: 0 },
      { match: "Answer the question", content: "Rex", times: 0 },
      { match: "Gold answer", json: { label: "CORRECT" }, times: 0 },
    );
    const seen: string[] = [];
    const first = await runLocomoEval({
      files: [two],
      baseURL: mock.url,
      model: "mock-chat",
      judgeModel: "mock-judge",
      budget: 500,
      concurrency: 2,
      onAnswer: (a) => seen.push(`${a.conversation}/${a.index}`),
    });
    expect(first.questions).toBe(4);
    expect(seen.sort()).toEqual([`${two}#0/0`, `${two}#0/1`, `${two}#1/0`, `${two}#1/1`]);

    // The earlier run got through the first conversation and one question of the second.
    const done = first.answers.filter((a) => a.conversation.endsWith("#0") || a.index === 0);
    const before = mock.chatRequests().length;
    const resumed = await runLocomoEval({
      files: [two],
      baseURL: mock.url,
      model: "mock-chat",
      judgeModel: "mock-judge",
      budget: 500,
      done,
    });
    expect(resumed.questions).toBe(4);
    const asked = mock
      .chatRequests()
      .slice(before)
      .filter((q) => q.body.model === "mock-chat" && JSON.stringify(q.body).includes("Answer the question"));
    // Only the second conversation ran again (in full: its database is gone), the first came from the earlier run.
    expect(asked).toHaveLength(2);
  });
});
