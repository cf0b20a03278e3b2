// eval:locomo's mechanics, offline: one small LoCoMo-shaped conversation goes through Mnemo's pipeline (messages,
// extraction, consolidation) once for each speaker as the user, each question is answered from recall and judged,
// against the project's test server.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { judgedCorrect, runLocomoEval } from "../scripts/eval/locomo-eval";

const conversation = {
  speaker_a: "Maya",
  speaker_b: "Jon",
  session_1_date_time: "1:56 pm on 8 May, 2023",
  session_1: [
    { speaker: "Maya", dia_id: "D1:1", text: "I adopted a puppy yesterday, his name is Rex!" },
    { speaker: "Jon", dia_id: "D1:2", text: "Congratulations, what breed?" },
    { speaker: "Maya", dia_id: "D1:3", text: "A beagle. Also, I start at the corner bakery on Monday." },
    { speaker: "Jon", dia_id: "D1:4", text: "Good luck with the new job! I move to Lisbon next week." },
  ],
  qa: [
    { question: "What is the name of Maya's puppy?", answer: "Rex", evidence: ["D1:1"], category: 1 },
    { question: "Where does Maya work?", answer: "a bakery", evidence: ["D1:3"], category: 4 },
    { question: "What is the name of Jon's cat?", adversarial_answer: "Tom", evidence: [], category: 5 },
  ],
};

describe("the judge's verdict", () => {
  it("is its last label: a judge that repeats the choices or reasons aloud is read by what it ends on", () => {
    expect(judgedCorrect('{"label": "CORRECT"}')).toBe(true);
    expect(judgedCorrect('<think>Same date.</think>\n```json\n{"label": "CORRECT"}\n```')).toBe(true);
    // An echo of the instructions ("{"label": "CORRECT"} or {"label": "WRONG"}") is not a verdict of CORRECT.
    expect(judgedCorrect('Reply with JSON only: {"label": "CORRECT"} or {"label": "WRONG"}.')).toBe(false);
    expect(judgedCorrect('It could look "label": "CORRECT", but the year differs. {"label": "WRONG"}')).toBe(false);
    expect(judgedCorrect("{'label': 'correct'}")).toBe(true);
    expect(judgedCorrect("CORRECT")).toBe(true);
    // Prose in lower case is not a label ("not correct").
    expect(judgedCorrect("The generated answer is not correct.")).toBe(false);
    expect(judgedCorrect("")).toBe(false);
  });
});

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
        match: "User: Maya: I adopted",
        json: { decisions: [{ op: "ADD", text: "Maya adopted a beagle puppy named Rex", kind: "fact" }] },
      },
      {
        match: "User: Maya: A beagle",
        json: { decisions: [{ op: "ADD", text: "Maya works at the corner bakery", kind: "fact" }] },
      },
      { match: "User: Jon: Congratulations", json: { decisions: [{ op: "NONE" }] } },
      {
        match: "User: Jon: Good luck",
        json: { decisions: [{ op: "ADD", text: "Is moving to Lisbon next week", kind: "fact" }] },
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
    // Each speaker was the user of a Mnemo of their own (as mem0 keeps a store per speaker): Jon's turns were the
    // user's in his extraction, and what was learned about him is there as well as what was learned about Maya.
    expect(r.memories).toBe(3);
    const extractions = mock.chatRequests().filter((q) => JSON.stringify(q.body).includes("Latest exchange"));
    // The memory model is told the session's date, so "yesterday" becomes a date.
    for (const q of extractions) expect(JSON.stringify(q.body)).toMatch(/Date of the exchange: Monday,? 8 May 2023/);
    expect(extractions.map((q) => JSON.stringify(q.body).match(/User: (\w+):/)?.[1]).sort()).toEqual([
      "Jon",
      "Jon",
      "Maya",
      "Maya",
    ]);
    // The answer came from Mnemo's recall: what the extraction learned was in front of the model, each speaker's
    // memories under their name.
    const asked = mock
      .chatRequests()
      .filter((q) => q.body.model === "mock-chat" && JSON.stringify(q.body).includes("Answer the question"));
    expect(asked).toHaveLength(2);
    const system = asked[0].body.messages[0].content as string;
    expect(system).toContain("Maya adopted a beagle puppy named Rex");
    expect(system.indexOf("Learned from Jon's side")).toBeLessThan(system.indexOf("Is moving to Lisbon"));
    expect(system.indexOf("Learned from Maya's side")).toBeLessThan(system.indexOf("Maya adopted a beagle"));
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
        speakers: "first",
      });
      expect(r.questions).toBe(2);
      expect(r.J).toBe(1);
      // Only the first speaker learned (--speakers first): two extractions, both of Maya's turns.
      const extractions = strict.chatRequests().filter((q) => JSON.stringify(q.body).includes("Latest exchange"));
      expect(extractions.every((q) => JSON.stringify(q.body).includes("User: Maya:"))).toBe(true);
      expect(extractions.length).toBeGreaterThanOrEqual(2);
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
