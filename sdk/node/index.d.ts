// Type declarations for the Pyramid Arena bot SDK for Node.js (index.js). The wire messages themselves
// are described by proto/pyramid/v1/pyramid.proto and docs/PROTOCOL.md.

/** A card code: rank `9 T J Q K A`, then suit `S H D C`; `"TS"` is the ten of spades. */
export type Card = string;

/** A suit letter. */
export type SuitLetter = "S" | "H" | "D" | "C";

/** Where the match stands. */
export type Phase = "declare" | "play" | "deal-over" | "match-over";

/** The declarer's announcement: tricks 0-6 and the trump suit. */
export interface Declaration {
  tricks: number;
  trump: SuitLetter;
}

/** A card with table talk said before it (defenders only, in the play phase). */
export interface PlayWithTalk {
  card: Card;
  talk?: string;
}

/** One of the request's legal actions, as the referee sent it. */
export type LegalAction = { declare: Declaration; card?: undefined } | { card: Card; declare?: undefined };

export interface Trick {
  leader: number;
  /** In play order, starting with the leader's card. */
  cards: Card[];
  /** `null` while the trick is being played. */
  winner: number | null;
}

export interface PyramidEntry {
  declared: number;
  taken: number;
  points: number;
}

export interface Pyramid {
  /** In the order the declarations were made. */
  entries: PyramidEntry[];
  /** For each number 0-6, how many more times it must be declared. */
  remaining: number[];
  total: number;
}

export interface TalkMessage {
  seat: number;
  /** The trick of the deal (1-6) during which it was said. */
  trick: number;
  text: string;
}

export interface Rules {
  players: 2 | 3 | 4;
  trickWinner: "led-suit" | "highest-rank";
  talk: "open" | "defenders" | "off";
  talkMaxLength: number;
  talkMaxPerTrick: number;
}

/**
 * This decision's time as the referee counts it (from sending the request until the reply arrives, so
 * the wire counts too: aim a few milliseconds before `deadline`). `receivedAt` and `deadline` are
 * `performance.now()` readings.
 */
export interface Clock {
  perActionMs: number;
  /** Bank left before this decision: it pays for any time over `perActionMs`. */
  bankMs: number;
  timeLeftMs: number;
  receivedAt: number;
  deadline: number;
}

/** One seat's view of the match: never another hand, the set-aside cards or the deck order. */
export interface Observation {
  seat: number;
  rules: Rules;
  phase: Phase;
  /** From 1. */
  dealNumber: number;
  dealer: number;
  declarer: number;
  /** `null` between deals and after the match. */
  toAct: number | null;
  /** This seat's cards, in deck order. */
  hand: Card[];
  declaration: Declaration | null;
  currentTrick: Trick;
  /** This deal's finished tricks. */
  tricks: Trick[];
  /** Tricks won in this deal, per seat. */
  taken: number[];
  pyramids: Pyramid[];
  /** The table talk of this deal that this seat may see. */
  talk: TalkMessage[];
  forfeited: boolean[];
  legalActions: LegalAction[];
  /** The cards this seat may play now (empty in the declare phase). */
  legalCards: Card[];
  /** The declarations this seat may make now (empty in the play phase). */
  legalDeclarations: Declaration[];
  trump: SuitLetter | null;
  declared: number | null;
  isDeclarer: boolean;
  myTurn: boolean;
  /** Cards this seat has not seen: in another hand or set aside. */
  unseenCards: Card[];
  /** Set on every observation a bot is asked to act on; absent in `dealEnd`. */
  clock?: Clock;
}

export interface MatchInfo {
  matchId: string;
  seat: number;
  seatNames: string[];
  rules: Rules;
  timeControl: { perActionMs: number; bankMs: number };
  /** This bot's seed for the match, a decimal string (a uint64 does not fit a JS number). */
  seed: string;
}

export interface MatchResult {
  matchId: string;
  totals: number[];
  /** Per seat, 1 = best. */
  ranks: number[];
  /** This bot's own faults, as `"KIND: detail"` lines. */
  faults: string[];
  forfeited: boolean;
}

type MaybePromise<T> = T | Promise<T>;

/** Base class of a bot: override `declare` and `play`; the other hooks are optional. */
export class Bot {
  name: string;
  version: string;
  constructor();
  /** A match begins: `info.seed` seeds this bot's randomness. */
  matchStart(info: MatchInfo): MaybePromise<void>;
  /** Return one of `obs.legalDeclarations`. */
  declare(obs: Observation): MaybePromise<Declaration>;
  /** Return a card code from `obs.legalCards`, or `{card, talk}` to talk as a defender. */
  play(obs: Observation): MaybePromise<Card | PlayWithTalk>;
  /** A deal is over: `obs` shows all six tricks and the updated pyramids. */
  dealEnd(obs: Observation): MaybePromise<void>;
  /**
   * Adds a line to the debug text sent with this bot's next answer, for its author only: it never changes
   * the play, no other seat sees it, and the referee keeps it apart (`referee logs LEAGUE ENTRANT`), at most
   * `MAX_DEBUG_BYTES` per answer (a longer text is not sent; a line on stderr says so).
   */
  debug(text: unknown): void;
  /** The match is over. */
  matchEnd(result: MatchResult): MaybePromise<void>;
}

export interface RunOptions {
  /** Default: `PYRAMID_ADDRESS`. */
  address?: string;
  /** Default: read from the pipe `PYRAMID_TOKEN_FD` names, else `PYRAMID_TOKEN` (the pipe wins when both are set). */
  token?: string;
  /**
   * A remote bot's only: how many matches at once to ask for (default: `PYRAMID_MAX_MATCHES`, else 1). The
   * referee grants at most its league's cap; each granted match plays on a stream of its own with a copy of
   * the bot (its `clone()` if it has one, else a structured clone of its own fields).
   */
  maxMatches?: number;
}

/**
 * Plays every match the referee asks for; resolves when the referee ends the stream (with OK, or with
 * CANCELLED when the referee was interrupted: a line on stderr says so), rejects on a refusal.
 */
export function run(bot: Bot, options?: RunOptions): Promise<void>;

/** `run(bot)` for a bot's main module: exits 0 at the end (CANCELLED too), or 1 with a one-line message on a refusal. */
export function main(bot: Bot): void;

/** Rank strength of a card code, 0 (nine) to 5 (ace): `rank("QS") === 3`. */
export function rank(card: Card): number;

/** Suit letter of a card code: `suit("QS") === "S"`. */
export function suit(card: Card): SuitLetter;

export const RANKS: "9TJQKA";
export const SUITS: "SHDC";
export const PROTOCOL_VERSION: 1;
/** The folder `pyramid/v1/pyramid.proto` is loaded from: the package's own copy. */
export const PROTO_ROOT: string;

/** The `pyramid.v1` package loaded with `@grpc/proto-loader` (for clients that need the raw messages). */
export function protocol(): any; // eslint-disable-line @typescript-eslint/no-explicit-any
/** Wire helpers the SDK uses; exported for tests. */
export function observationFromWire(message: unknown, rules: Rules, legalActions?: unknown[]): Observation;
export function clockFromWire(request: { per_action_ms?: number; bank_ms?: number }, receivedAt: number): Clock;
export function replyFor(requestId: string | number, choice: Declaration | Card | PlayWithTalk): unknown;
/** What a bot's method threw, on one line of at most 200 characters, as the SDK sends it (`ActionReply.error`). */
export function errorLine(error: unknown): string;
/** The debug text a bot collected since the last call (its lines joined by line breaks), forgotten once taken: "" if none or over `MAX_DEBUG_BYTES`. */
export function takeDebug(bot: object): string;
/** Bytes of UTF-8 of one answer's debug text the referee keeps (`ActionReply.debug`). */
export const MAX_DEBUG_BYTES: 1024;
/** Bytes of debug text the referee keeps of one seat in one match. */
export const MAX_DEBUG_PER_MATCH: 65536;
/** How many matches at once a remote bot asks for: `given`, else `text` (`PYRAMID_MAX_MATCHES`), else 1; throws for anything but 1-1024. */
export function matchesAsked(given: number | undefined, text: string | undefined): number;
/** The bot a further stream of several matches at once plays with: `bot.clone()`, else a structured clone of its own fields. */
export function copyBot<B extends object>(bot: B): B;
