/**
 * The kit's icon for a bundle that gives none (OperatorHub shows one for every operator): a
 * blue hexagon, as Kubernetes' own marks are, holding a reconcile loop. An SVG of our own.
 */
export const KIT_ICON = {
  mediatype: 'image/svg+xml',
  base64data:
    'PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCA2NCA2NCI+PHBvbHlnb24gcG9pbnRzPSIzMiw0IDU2LDE4IDU2LDQ2IDMyLDYwIDgsNDYgOCwxOCIgZmlsbD0iIzMyNmNlNSIvPjxjaXJjbGUgY3g9IjMyIiBjeT0iMzIiIHI9IjExIiBmaWxsPSJub25lIiBzdHJva2U9IiNmZmYiIHN0cm9rZS13aWR0aD0iNSIvPjxwYXRoIGQ9Ik0zMiAxNHY4TTMyIDQydjhNMTQgMzJoOE00MiAzMmg4IiBzdHJva2U9IiNmZmYiIHN0cm9rZS13aWR0aD0iNSIvPjwvc3ZnPg==',
} as const;
