import { checkAuth, type User } from "./auth";

const REPORTS = { path: "/reports", adminOnly: false };
const SETTINGS = { path: "/settings", adminOnly: true };

export function getReport(user: User | undefined) {
  if (!checkAuth(user, REPORTS)) {
    return { status: 403, body: "forbidden" };
  }
  return { status: 200, body: "quarterly report" };
}

export function updateSettings(user: User | undefined, patch: Record<string, string>) {
  if (!checkAuth(user, SETTINGS)) {
    return { status: 403, body: "forbidden" };
  }
  return { status: 200, body: { ...patch } };
}
