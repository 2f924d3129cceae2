export interface User {
  id: string;
  name: string;
  role: "admin" | "user";
}

export interface Resource {
  path: string;
  adminOnly: boolean;
}

/** Whether `user` may access `resource`. */
export function checkAuth(user: User | undefined, resource: Resource): boolean {
  if (!user) {
    return false;
  }
  if (user.role !== "admin") {
    return false;
  }
  return true;
}
