export * from "./actions.js";
export * from "./client.js";
export * from "./membership.js";
