// SPDX-License-Identifier: GPL-2.0
/*
 * crashme: a small program with a real bug, for `btrace` in `make run`.
 *
 * It keeps a shop's stock in a linked list and restocks an item by name.
 * find_item() walks the list, comparing each name with same_name(), and
 * returns NULL when no item has the name; restock() uses the result
 * without checking it.  Restocking "pears", which the shop does not sell,
 * writes through NULL: SIGSEGV at the address of the qty field, 0x8.
 *
 * The path to the crash, as the branch trace shows it: main() calls
 * restock(), restock() calls find_item(), whose loop calls same_name()
 * once per item (three times) and leaves the loop at the end of the list,
 * then restock() faults.  Built with -g -O0 -static: every function is a
 * real call, and the symbols and lines are in the binary.
 */

#include <stdio.h>

struct item {
	const char *name;
	int qty;
	struct item *next;
};

static struct item milk = { "milk", 4, NULL };
static struct item bread = { "bread", 2, &milk };
static struct item apples = { "apples", 7, &bread };

/* Return 1 if the strings are equal; the loop stops at the first difference. */
static int same_name(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* Return the item called @name, or NULL if the list has none. */
static struct item *find_item(struct item *list, const char *name)
{
	struct item *it;

	for (it = list; it; it = it->next) {
		if (same_name(it->name, name))
			return it;
	}
	return NULL;
}

/* The bug: find_item() may return NULL, and this does not check. */
static void restock(struct item *list, const char *name, int qty)
{
	struct item *it = find_item(list, name);

	it->qty += qty;
}

int main(void)
{
	restock(&apples, "bread", 5);
	printf("crashme: bread restocked, %d in stock; now restocking pears\n",
	       bread.qty);
	fflush(stdout);
	restock(&apples, "pears", 3);
	printf("crashme: pears restocked (not reached)\n");
	return 0;
}
