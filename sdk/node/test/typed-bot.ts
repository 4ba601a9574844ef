// A TypeScript bot written against index.d.ts; test/types.test.js type-checks it with tsc --strict.
import { Bot, Card, Declaration, MatchInfo, MatchResult, Observation, PlayWithTalk, main, rank, run } from "..";

class TypedBot extends Bot {
  private seed = "";

  constructor() {
    super();
    this.name = "typed";
  }

  matchStart(info: MatchInfo): void {
    this.seed = info.seed;
  }

  declare(obs: Observation): Declaration {
    const best = obs.legalDeclarations.find((d) => d.trump === obs.hand.map((c) => c[1])[0]);
    return best ?? obs.legalDeclarations[0];
  }

  async play(obs: Observation): Promise<Card | PlayWithTalk> {
    const left = obs.clock ? obs.clock.deadline - performance.now() : 0;
    const card = [...obs.legalCards].sort((a, b) => rank(a) - rank(b))[0];
    return left > 5 && !obs.isDeclarer && obs.rules.talk !== "off" ? { card, talk: "low" } : card;
  }

  matchEnd(result: MatchResult): void {
    console.error(result.totals.join(" "), result.forfeited, this.seed);
  }
}

const bot: Bot = new TypedBot();
if (process.env.PYRAMID_ADDRESS) main(bot);
else run(bot, { address: "unix:/nowhere", token: "" }).catch(() => undefined);
