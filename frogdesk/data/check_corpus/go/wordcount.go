// Command wordcount prints the most frequent words of its input files.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode"
)

type entry struct {
	word  string
	count int
}

func countWords(r io.Reader, counts map[string]int) error {
	scanner := bufio.NewScanner(r)
	scanner.Split(bufio.ScanWords)
	for scanner.Scan() {
		word := strings.TrimFunc(strings.ToLower(scanner.Text()), func(c rune) bool {
			return !unicode.IsLetter(c) && !unicode.IsDigit(c)
		})
		if word != "" {
			counts[word]++
		}
	}
	return scanner.Err()
}

func top(counts map[string]int, n int) []entry {
	entries := make([]entry, 0, len(counts))
	for word, count := range counts {
		entries = append(entries, entry{word, count})
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].count != entries[j].count {
			return entries[i].count > entries[j].count
		}
		return entries[i].word < entries[j].word
	})
	if len(entries) > n {
		entries = entries[:n]
	}
	return entries
}

func main() {
	n := flag.Int("n", 10, "how many words to print")
	flag.Parse()
	counts := make(map[string]int)
	if flag.NArg() == 0 {
		if err := countWords(os.Stdin, counts); err != nil {
			fmt.Fprintln(os.Stderr, "wordcount:", err)
			os.Exit(1)
		}
	}
	for _, name := range flag.Args() {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "wordcount:", err)
			os.Exit(1)
		}
		err = countWords(f, counts)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "wordcount: %s: %v\n", name, err)
			os.Exit(1)
		}
	}
	for _, e := range top(counts, *n) {
		fmt.Printf("%7d %s\n", e.count, e.word)
	}
}
