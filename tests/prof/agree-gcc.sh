#!/usr/bin/env bash
# gcc compiling a file: a driver, cc1 and as, three processes.
. "$(dirname "$0")/lib.sh"
need gcc strace setarch
cat >"$WORK/t.c" <<'C'
#include <stdlib.h>
struct node { int k; struct node *l, *r; };
static struct node *ins(struct node *n, int k)
{
	if (!n) { n = calloc(1, sizeof(*n)); n->k = k; return n; }
	if (k < n->k) n->l = ins(n->l, k); else n->r = ins(n->r, k);
	return n;
}
int main(int argc, char **argv)
{
	struct node *r = 0;
	for (int i = 0; i < argc * 1000; i++) r = ins(r, rand());
	return r ? r->k & 1 : 0;
}
C
agree gcc gcc -O2 -c "$WORK/t.c" -o "$WORK/t.o"
