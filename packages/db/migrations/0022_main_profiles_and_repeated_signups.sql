ALTER TABLE "users" ADD COLUMN "signup_repeated_at" timestamp with time zone;--> statement-breakpoint
-- Main profiles made at sign-up before they got case-backend's alias and consent (an empty alias,
-- no consent) get both now: the blurred address (BlurEmailAddress: first character, "****@", the
-- rest after the first "@" without further "@"s; "****@**" with nothing before the "@") and the
-- account's creation time, when case-backend would have set it. Profiles a participant named or
-- gave consent to are left as they are.
UPDATE "profiles" AS p
SET "alias" = CASE
    WHEN split_part(u."email", '@', 1) = '' THEN '****@**'
    WHEN strpos(u."email", '@') = 0 THEN left(u."email", 1) || '****@'
    ELSE left(u."email", 1) || '****@' || replace(substr(u."email", strpos(u."email", '@') + 1), '@', '')
  END,
  "consent_confirmed_at" = u."created_at"
FROM "users" AS u
WHERE p."user_id" = u."id" AND p."main_profile" AND p."alias" = '' AND p."consent_confirmed_at" IS NULL;
