import { describe, expect, it } from "vitest";
import { asksToForget, asksToRemember } from "@/lib/memory/user-request";

describe("whether the user's message asks to remember or forget", () => {
  it("finds a request in the user's words, in several languages", () => {
    for (const m of [
      "Please remember that I'm vegan",
      "Don't forget: my sister's birthday is 3 May",
      "Keep in mind that I use metric units",
      "I'm vegetarian, keep that in mind",
      "Write this down: my flight is on Friday",
      "From now on, answer in French",
      "Souviens-toi que je suis végétarien",
      "Recuerda que vivo en Madrid",
      "Lembre-se de que tenho um gato",
      "Merk dir, dass ich Vegetarier bin",
      "请记住我喜欢绿茶",
      "私が猫を飼っていることを覚えておいて",
      "Запомни, что я живу в Казани",
    ])
      expect(asksToRemember(m), m).toBe(true);
    for (const m of [
      "Forget my old address",
      "Please delete what you know about my job",
      "Remove the memory about my gym",
      "Oublie mon adresse",
    ])
      expect(asksToForget(m), m).toBe(true);
  });

  it("a message about something else asks for neither; 'don't forget' does not ask to forget", () => {
    for (const m of [
      "Any peanut recipes for the weekend?",
      "What's the capital of Peru?",
      "Summarise this article",
      "How do I remove a wine stain?",
    ]) {
      expect(asksToRemember(m), m).toBe(false);
      expect(asksToForget(m), m).toBe(false);
    }
    expect(asksToForget("Don't forget my sister's birthday")).toBe(false);
    expect(asksToForget("Vergiss nicht, ich bin Vegetarier")).toBe(false);
  });
});
