// Where a turn's time goes before the model's request: the turn marks its steps on a Node diagnostics channel, which
// costs one check when nobody listens. `bench:context --timeline` listens and prints when each step ends, measured
// from the turn's start (docs/benchmarks.md); an operator can attach the same way to a running process.
// The marks are the process's, not a turn's: with turns running at once they interleave, so a listener times one
// turn at a time.
import diagnostics_channel from "node:diagnostics_channel";

const channel = diagnostics_channel.channel("mnemo.turn.step");

/** The steps a turn marks. The question's vector and the batched read run at once: either may end first. */
export const TURN_STEPS = [
  "saved", // the question and the empty answer written (the append)
  "question vector", // the encoder's answer taken by the server's thread
  "reads", // the turn's batched read returned (its one statement on PGlite)
  "recall reads", // the reads that needed the question's vector (the neighbours of the hits found by meaning)
  "context", // the window, recall and the usage check all in hand
  "request", // the model's request about to be sent
] as const;
export type TurnStep = (typeof TURN_STEPS)[number];

/** Marks the end of a step of the turn running now (nothing when nobody listens). */
export function turnStep(step: TurnStep): void {
  if (channel.hasSubscribers) channel.publish(step);
}

/** Calls `onStep` with each step marked from now on, until the returned function is called. */
export function watchTurnSteps(onStep: (step: TurnStep) => void): () => void {
  const listener = (step: unknown) => onStep(step as TurnStep);
  channel.subscribe(listener);
  return () => channel.unsubscribe(listener);
}
