# mistake: a Python 2 print statement
# expect: Missing parentheses in call to 'print'
# fix: print 'done' => print('done')
plt.plot([3, 1, 2])
plt.savefig(OUT)
print 'done'
