/**
 * Patterns for the strings the kinds pass on to built-in objects, written so that the CRD
 * refuses at the door what the child would refuse (or fail on) later: image references, cron
 * schedules, DNS names, Ingress paths. They are RE2 and ECMAScript alike (no look-around): the
 * API server evaluates them with Go's regexp, the unit tier with JavaScript's.
 */

const DOMAIN_COMPONENT = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const PORT = '(?::[0-9]{1,5})?';
/**
 * A registry: it has a dot or a port, or is `localhost` (docker's rule: otherwise the first
 * component is part of the repository path, which must be lower-case).
 */
const REGISTRY = `(?:localhost${PORT}|${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})+${PORT}|${DOMAIN_COMPONENT}:[0-9]{1,5}|\\[[0-9a-fA-F:]+\\]${PORT})`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const TAG = '[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}';
const DIGEST = '(?:sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})';

/** `[registry[:port]/]repository[:tag][@digest]`, as the OCI distribution reference grammar has it. */
export const IMAGE_REFERENCE_PATTERN = `^(?:${REGISTRY}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*(?::${TAG})?(?:@${DIGEST})?$`;
/** Longer than any real reference (a 255-character name, a 128-character tag and a sha512 digest). */
export const IMAGE_REFERENCE_MAX_LENGTH = 512;

/** An RFC 1123 label: what each dot-separated part of a DNS name may be (at most 63 characters). */
export const DNS_LABEL = '[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?';
/** A DNS subdomain (RFC 1123): names of StorageClasses, IngressClasses, Secrets; host names. */
export const DNS_SUBDOMAIN_PATTERN = `^${DNS_LABEL}(?:\\.${DNS_LABEL})*$`;
export const DNS_SUBDOMAIN_MAX_LENGTH = 253;

// Ingress paths (Prefix): absolute, no empty, "." or ".." segment, no percent-encoding (the API
// server refuses "//", "/./", "/../", "%2f" and a trailing "/." or "/..").
const PATH_CHAR = "[A-Za-z0-9_~!$&'()*+,;=:@-]";
const SEGMENT = `(?:${PATH_CHAR}(?:${PATH_CHAR}|\\.)*|\\.${PATH_CHAR}(?:${PATH_CHAR}|\\.)*|\\.\\.(?:${PATH_CHAR}|\\.)+)`;
export const INGRESS_PATH_PATTERN = `^(?:/|(?:/${SEGMENT})+/?)$`;
export const INGRESS_PATH_MAX_LENGTH = 1024;

// Cron: the fields Kubernetes CronJobs understand (robfig/cron's standard parser), each value in
// its range, steps from 1, names of months and weekdays; no L, W or #.
const MONTHS = 'JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC';
const DAYS = 'SUN|MON|TUE|WED|THU|FRI|SAT';
const MINUTE = '(?:[0-5]?[0-9])';
const HOUR = '(?:[01]?[0-9]|2[0-3])';
const DAY_OF_MONTH = '(?:0?[1-9]|[12][0-9]|3[01])';
const MONTH = `(?:0?[1-9]|1[0-2]|${MONTHS}|${MONTHS.toLowerCase()})`;
const DAY_OF_WEEK = `(?:[0-6]|${DAYS}|${DAYS.toLowerCase()})`;

function cronField(value: string, question = false): string {
  const item = `(?:\\*${question ? '|\\?' : ''}|${value}(?:-${value})?)(?:/[1-9][0-9]?)?`;
  return `${item}(?:,${item})*`;
}

const MACRO = '@(?:annually|yearly|monthly|weekly|daily|midnight|hourly)';
const FIVE_FIELDS = [
  cronField(MINUTE),
  cronField(HOUR),
  cronField(DAY_OF_MONTH, true),
  cronField(MONTH),
  cronField(DAY_OF_WEEK, true),
].join(' +');

/** A CronJob schedule: five fields (minute hour day-of-month month day-of-week) or a macro. */
export const CRON_SCHEDULE_PATTERN = `^(?:${MACRO}|${FIVE_FIELDS})$`;
/** The same, or six fields with a leading seconds field (CronTab's cronSpec, as seed 000 writes it). */
export const CRON_WITH_SECONDS_PATTERN = `^(?:${MACRO}|(?:${cronField(MINUTE)} +)?${FIVE_FIELDS})$`;
/** Far longer than any schedule a person writes (every minute listed is about 170 characters). */
export const CRON_MAX_LENGTH = 256;
