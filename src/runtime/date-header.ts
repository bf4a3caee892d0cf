import type { IncomingMessage, ServerResponse } from "node:http";
import { httpDate } from "./utc-time.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The handler with the Date header written here: node's own (`sendDate`) comes from
 * Date#toUTCString, which loads ICU's time zone data into a process that needs none (utc-time.ts).
 */
export function withDate(handler: Handler): Handler {
  return (req, res) => {
    res.sendDate = false;
    res.setHeader("Date", httpDate(Date.now()));
    handler(req, res);
  };
}
